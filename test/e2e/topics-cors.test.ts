import { describe, expect, it } from 'vitest';
import { newTenant, recipient, useStack } from './fixtures.js';
import { topicCall } from './topic-fixtures.js';

const ORIGIN = 'https://app.example.com';

/**
 * The topic routes answer CORS as /notify does (issue 44): a browser's preflight gets the route's
 * methods, a cross-origin call from the web key's domain is answered readably, and a call from
 * any other Origin is refused by the key's domain rule (403), CORS being no gate.
 */
describe('topics: CORS', () => {
  const stack = useStack({ services: ['auth', 'ingress-api', 'status'] });

  const preflight = (path: string, method: string) =>
    topicCall(stack(), 'OPTIONS', path, undefined, {
      Origin: ORIGIN,
      'Access-Control-Request-Method': method,
      'Access-Control-Request-Headers': 'content-type',
    });

  it('answers a preflight with each topic route’s methods', async () => {
    for (const base of ['', '/bff_v001']) {
      const members = await preflight(`${base}/topics/team.a/members`, 'PUT');
      expect(members.status).toBe(204);
      expect(members.headers['access-control-allow-origin']).toBe(ORIGIN);
      expect(members.headers['access-control-allow-methods']).toBe('GET, PUT, DELETE');
      expect(members.headers['access-control-allow-headers']).toMatch(/Content-Type/);
      const topic = await preflight(`${base}/topics/team.a`, 'DELETE');
      expect(topic.status).toBe(204);
      expect(topic.headers['access-control-allow-methods']).toBe('DELETE');
    }
    // Any other path under /topics is not a route: no preflight for it, its 404 as any other.
    const other = await preflight('/topics/team.a/members/extra', 'PUT');
    expect(other.status).toBe(404);
    expect(other.headers['access-control-allow-methods']).toBeUndefined();
  });

  it('answers a cross-origin call from the web key’s domain readably', async () => {
    const s = stack();
    const tenant = await newTenant(s, 'web', ORIGIN);
    const who = recipient();
    const headers = { Origin: ORIGIN };
    const put = await topicCall(
      s,
      'PUT',
      '/topics/team.b/members',
      { api_key: tenant.key.key, recipients: [who] },
      headers,
    );
    expect(put.status).toBe(200);
    expect(put.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(put.headers.vary).toMatch(/Origin/);
    const q = new URLSearchParams({ api_key: tenant.key.key });
    const list = await topicCall(s, 'GET', `/topics/team.b/members?${q}`, undefined, headers);
    expect(list.status).toBe(200);
    expect(list.body.recipients).toEqual([who]);
    expect(list.headers['access-control-allow-origin']).toBe(ORIGIN);
    const gone = await topicCall(s, 'DELETE', `/topics/team.b?${q}`, undefined, headers);
    expect(gone.status).toBe(200);
    expect(gone.headers['access-control-allow-origin']).toBe(ORIGIN);
  });

  it('refuses a call from another Origin with the key’s domain rule', async () => {
    const s = stack();
    const tenant = await newTenant(s, 'web', ORIGIN);
    const evil = 'https://evil.example';
    const put = await topicCall(
      s,
      'PUT',
      '/topics/team.c/members',
      { api_key: tenant.key.key, recipients: [recipient()] },
      { Origin: evil },
    );
    expect(put.status).toBe(403);
    expect(put.body.error.code).toBe('origin_mismatch');
    const q = new URLSearchParams({ api_key: tenant.key.key });
    const list = await topicCall(s, 'GET', `/topics/team.c/members?${q}`, undefined, {
      Origin: evil,
    });
    expect(list.status).toBe(403);
    expect(list.body.error.code).toBe('origin_mismatch');
  });
});

import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { post, request } from '@herald/testkit';
import { describe, expect, it } from 'vitest';
import { connect, eventually, recipient, useStack } from './fixtures.js';

const dist = join(tmpdir(), `herald-dash-${randomUUID()}`);
mkdirSync(join(dist, 'assets'), { recursive: true });
writeFileSync(join(dist, 'index.html'), '<!doctype html><title>Herald</title>');
writeFileSync(join(dist, 'assets', 'app-1.js'), 'console.log(1)');

/** The dashboard's routes on auth's listener, against the whole stack and the status service. */
describe('dashboard API', () => {
  const stack = useStack({
    services: ['auth', 'ingress-api', 'socket-edge', 'status'],
    env: { auth: { DASHBOARD_DIR: dist } },
  });
  const authUrl = () => `https://127.0.0.1:${stack().ports.auth}`;

  async function signup() {
    const email = `dash-${randomUUID()}@test.herald`;
    const password = randomUUID();
    const res = await request('POST', `${authUrl()}/v1/accounts`, stack().ca, { email, password });
    expect(res.status).toBe(201);
    return { email, password, ...(await login(email, password)), id: res.body.id as string };
  }

  async function login(email: string, password: string) {
    const res = await request('POST', `${authUrl()}/v1/sessions`, stack().ca, { email, password });
    expect(res.status).toBe(201);
    const cookie = String(res.headers['set-cookie'] ?? '').split(';')[0] ?? '';
    return { headers: { cookie, 'x-herald-csrf': res.body.csrf as string } };
  }

  const get = (path: string, headers: Record<string, string> = {}) =>
    request('GET', `${authUrl()}${path}`, stack().ca, undefined, headers);

  it('shows an account its own delivery figures, events and keys, and never another account’s', async () => {
    const a = await signup();
    const b = await signup();
    const key = await request(
      'POST',
      `${authUrl()}/v1/keys/test`,
      stack().ca,
      { client: 'mobile' },
      a.headers,
    );
    expect(key.status).toBe(201);
    const to = recipient();
    const sent = await post(stack().baseUrl, stack().ca, {
      recipient: to,
      payload: { secret: 'never shown' },
      api_key: key.body.key,
      client: 'mobile',
    });
    expect(sent.status).toBe(202);
    await eventually(
      async () =>
        (await get(`/v1/dashboard/status?window=hour&key_id=${key.body.id}`, a.headers)).body.counts
          ?.pending === 1,
      'the queued event counted as pending',
      30_000,
    );
    const sock = await connect(stack(), { apiKey: key.body.key, recipient: to, v1: true });
    await sock.waitForFrames(1);
    await eventually(
      async () =>
        (await get(`/v1/dashboard/status?window=day`, a.headers)).body.counts?.delivered === 1,
      'the event counted as delivered',
      30_000,
    );
    const conns = await get('/v1/dashboard/connections', a.headers);
    expect(conns.status).toBe(200);
    await eventually(
      async () => (await get('/v1/dashboard/connections', a.headers)).body.test === 1,
      'the open socket counted',
      30_000,
    );
    await sock.close();

    const byId = await get(`/v1/dashboard/events?id=${sent.body.id}`, a.headers);
    expect(byId.body.events).toEqual([
      expect.objectContaining({ id: sent.body.id, status: 'delivered', recipient: to }),
    ]);
    expect(byId.text).not.toContain('never shown');
    const byRecipient = await get(`/v1/dashboard/events?recipient=${to}`, a.headers);
    expect(byRecipient.body.events).toHaveLength(1);
    const keys = await get('/v1/dashboard/keys', a.headers);
    expect(keys.body.keys[0]).toMatchObject({ id: key.body.id, last_used_at: expect.any(String) });
    expect(keys.text).not.toContain(key.body.key);

    // Account B, even naming A's key and event, sees nothing of A's.
    const other = await get(`/v1/dashboard/events?id=${sent.body.id}`, b.headers);
    expect(other.body.events).toEqual([]);
    const otherCounts = await get(
      `/v1/dashboard/status?window=day&key_id=${key.body.id}`,
      b.headers,
    );
    expect(otherCounts.body.counts).toEqual({ sent: 0, pending: 0, delivered: 0, failed: 0 });
    expect((await get(`/v1/dashboard/events?recipient=${to}`, b.headers)).body.events).toEqual([]);
  });

  it('needs a session for figures and names the field of a bad query', async () => {
    expect((await get('/v1/dashboard/status')).status).toBe(401);
    const a = await signup();
    const bad = await get('/v1/dashboard/status?window=year', a.headers);
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('window');
  });

  it('lists the plan catalogue with USD and KES prices', async () => {
    const res = await get('/v1/plans');
    expect(res.status).toBe(200);
    expect(res.body.plans[1]).toMatchObject({ id: 'hobby', price: { usd: 9, kes: 1200 } });
  });

  it('resets a password with the one-time token the admin tool prints', async () => {
    const a = await signup();
    const out = (await stack().admin(['account', 'reset-token', '--email', a.email, '--json'])) as {
      token: string;
    };
    const fresh = `new-${randomUUID()}`;
    const reset = () =>
      request('POST', `${authUrl()}/v1/password-resets`, stack().ca, {
        token: out.token,
        password: fresh,
      });
    expect((await reset()).status).toBe(204);
    // One time only, and the old sessions are gone.
    const again = await reset();
    expect(again.status).toBe(401);
    expect(again.body.error.field).toBe('token');
    expect((await get('/v1/account', a.headers)).status).toBe(401);
    await login(a.email, fresh);
  });

  it('serves the built app with a fallback to index.html, never over the API', async () => {
    const page = await get('/keys/some-route');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<title>Herald</title>');
    const asset = await get('/assets/app-1.js');
    expect(asset.headers['cache-control']).toContain('immutable');
    expect((await get('/../../etc/passwd')).text).not.toContain('root:');
    expect((await get('/v1/nothing')).status).toBe(404);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS } from './support/auth-responder.js';
import { type IngressFixture, startIngressFixture } from './support/fixture.js';
import { request } from './support/http.js';

let fx: IngressFixture;

// No status service answers on this fixture's NATS: every lookup with a good key times out.
beforeAll(async () => {
  fx = await startIngressFixture({ STATUS_TIMEOUT_MS: '200' });
});
afterAll(async () => {
  await fx?.stop();
});

const lookup = (body: unknown) => request(fx.baseUrl, { path: '/events/status', body });

describe('POST /events/status refusals', () => {
  it('answers 503 unavailable in the plain error shape, without dispatch status text', async () => {
    const reply = await lookup({ api_key: KEYS.mobile, ids: ['nope'] });
    expect(reply.status).toBe(503);
    expect(reply.headers['retry-after']).toBe('1');
    expect(reply.json).toEqual({
      error: {
        code: 'unavailable',
        message:
          'The status service did not answer: retry shortly (event delivery is not affected)',
      },
    });
  });

  it('answers GET and PUT 405 method_not_allowed with Allow: POST', async () => {
    for (const method of ['GET', 'PUT']) {
      const reply = await request(fx.baseUrl, { method, path: '/events/status' });
      expect(reply.status).toBe(405);
      expect(reply.headers.allow).toBe('POST');
      expect(reply.json.error).toMatchObject({ code: 'method_not_allowed', field: 'method' });
    }
  });

  it('answers a bad lookup in the same shape, naming the field', async () => {
    const reply = await lookup({ api_key: KEYS.mobile, ids: 'nope' });
    expect(reply.status).toBe(400);
    expect(Object.keys(reply.json)).toEqual(['error']);
    expect(reply.json.error).toMatchObject({ code: 'invalid_field', field: 'ids' });
  });
});

import { randomUUID } from 'node:crypto';
import { post, request, TEST_PLANS } from '@herald/testkit';
import { describe, expect, it } from 'vitest';
import { eventually, useStack } from './fixtures.js';

const APP = 'https://app.example.test';
/** Burst of the Test key: past it, a send is refused `rate_limited` (almost no refill). */
const BURST = 2;

/**
 * A key's recent refusals (issue 45): what ingress refused for a key it could identify, aggregated
 * and published on rt.refusals.<account>, kept by the status service, read through the account
 * API by the key's own account only. Never a payload or the key.
 */
describe('dashboard API: refusals', () => {
  const stack = useStack({
    services: ['auth', 'ingress-api', 'socket-edge', 'status'],
    plans: {
      ...TEST_PLANS,
      test_key_limits: {
        ...TEST_PLANS.test_key_limits,
        dispatch_rate: 0.001,
        dispatch_burst: BURST,
      },
    },
    env: { 'ingress-api': { REFUSAL_FLUSH_MS: '100', PAYLOAD_LIMIT_BYTES: '1024' } },
  });
  const authUrl = () => `https://127.0.0.1:${stack().ports.auth}`;

  /** A new account, logged in, with a web Test key for APP. */
  async function signup() {
    const email = `refusals-${randomUUID()}@test.herald`;
    const password = randomUUID();
    const made = await request('POST', `${authUrl()}/v1/accounts`, stack().ca, { email, password });
    expect(made.status).toBe(201);
    const res = await request('POST', `${authUrl()}/v1/sessions`, stack().ca, { email, password });
    const cookie = String(res.headers['set-cookie'] ?? '').split(';')[0] ?? '';
    const headers = { cookie, 'x-herald-csrf': res.body.csrf as string };
    const key = await request(
      'POST',
      `${authUrl()}/v1/keys/test`,
      stack().ca,
      { client: 'web', domain: APP },
      headers,
    );
    expect(key.status).toBe(201);
    return { headers, key: key.body as { id: string; key: string } };
  }

  const get = (path: string, headers: Record<string, string> = {}) =>
    request('GET', `${authUrl()}${path}`, stack().ca, undefined, headers);
  const send = (body: unknown, origin: string, raw?: string) =>
    post(stack().baseUrl, stack().ca, body, {
      headers: { origin },
      ...(raw === undefined ? {} : { raw }),
    });

  it("shows a key's refusals (Origin, bad field, rate) to its account only, never a payload or the key", async () => {
    const a = await signup();
    const b = await signup();
    const secret = `secret-payload-${randomUUID()}`;
    const event = {
      recipient: randomUUID(),
      payload: { secret },
      api_key: a.key.key,
      client: 'web',
    };
    // 403 origin_mismatch: the key is verified, then refused for the Origin.
    const evil = await send(event, 'https://evil.test');
    expect(evil.status).toBe(403);
    expect(evil.body.error.code).toBe('origin_mismatch');
    // 400: a bad field before the key is looked at; the body's key verifies, so it is the key's.
    const bad = await send({ ...event, recipient: 'not a recipient!' }, APP);
    expect(bad.status).toBe(400);
    // 413: too large to read the key from: nobody's refusal.
    const big = await send(event, APP, JSON.stringify({ ...event, payload: 'x'.repeat(40_000) }));
    expect(big.status).toBe(413);
    // The burst, then 403 rate_limited, three times: one record with a count.
    const codes: string[] = [];
    for (let i = 0; i < BURST + 3; i++) {
      const res = await send(event, APP);
      codes.push(res.status === 202 || res.status === 200 ? 'ok' : res.body.error.code);
    }
    expect(codes).toEqual([...Array(BURST).fill('ok'), ...Array(3).fill('rate_limited')]);

    type Row = { code: string; count: number; status: number; field: string | null };
    const read = async () => {
      const res = await get(`/v1/dashboard/refusals?key_id=${a.key.id}`, a.headers);
      expect(res.status).toBe(200);
      return res.body as { key_id: string; refusals: Row[] };
    };
    await eventually(
      async () => {
        const { refusals } = await read();
        const total = (code: string) =>
          refusals.filter((r) => r.code === code).reduce((n, r) => n + r.count, 0);
        return (
          total('origin_mismatch') === 1 &&
          total('rate_limited') === 3 &&
          refusals.some((r) => r.status === 400)
        );
      },
      "the key's refusals read back through the account API",
      30_000,
    );
    const body = await read();
    expect(body.refusals.find((r) => r.code === 'origin_mismatch')).toMatchObject({
      status: 403,
      origin: 'https://evil.test',
      route: '/notify',
      count: 1,
      first_at: expect.any(String),
      last_at: expect.any(String),
    });
    expect(body.refusals.find((r) => r.status === 400)).toMatchObject({
      field: 'recipient',
      origin: APP,
    });
    expect(body.refusals.some((r) => r.status === 413)).toBe(false);
    const text = JSON.stringify(body);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(a.key.key);

    // Another account reads nothing of this key, and its own key has no refusals.
    const theirs = await get(`/v1/dashboard/refusals?key_id=${a.key.id}`, b.headers);
    expect(theirs.status).toBe(200);
    expect(theirs.body.refusals).toEqual([]);
    const own = await get(`/v1/dashboard/refusals?key_id=${b.key.id}`, b.headers);
    expect(own.body.refusals).toEqual([]);
  });

  it('names the route by its pattern: a batch and a topic route refused for their Origin', async () => {
    const a = await signup();
    const evil = { origin: 'https://evil.test' };
    const batch = await post(
      stack().baseUrl,
      stack().ca,
      { api_key: a.key.key, client: 'web', events: [{ recipient: randomUUID(), payload: {} }] },
      { path: '/notify/batch', headers: evil },
    );
    expect(batch.body.error?.code).toBe('origin_mismatch');
    const topic = `secret-topic-${randomUUID()}`;
    const members = await request(
      'PUT',
      `${stack().baseUrl}/topics/${topic}/members`,
      stack().ca,
      { api_key: a.key.key, client: 'web', recipients: [randomUUID()] },
      evil,
    );
    expect(members.body.error?.code).toBe('origin_mismatch');
    await eventually(
      async () => {
        const res = await get(`/v1/dashboard/refusals?key_id=${a.key.id}`, a.headers);
        const routes = (res.body.refusals as Array<{ route: string }>).map((r) => r.route);
        return routes.includes('/notify/batch') && routes.includes('/topics/:topic/members');
      },
      'the batch and topic refusals, each under its route',
      30_000,
    );
    const text = JSON.stringify(
      (await get(`/v1/dashboard/refusals?key_id=${a.key.id}`, a.headers)).body,
    );
    expect(text).not.toContain(topic);
  });

  it('needs a session and a key_id, and names the field at fault', async () => {
    expect((await get('/v1/dashboard/refusals?key_id=x')).status).toBe(401);
    const a = await signup();
    const none = await get('/v1/dashboard/refusals', a.headers);
    expect(none.status).toBe(400);
    expect(none.body.error.field).toBe('key_id');
    const over = await get(`/v1/dashboard/refusals?key_id=${a.key.id}&limit=201`, a.headers);
    expect(over.status).toBe(400);
    expect(over.body.error.field).toBe('limit');
  });
});

import { randomUUID } from 'node:crypto';
import { HeraldError, HeraldPush } from '@herald/sdk/push';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { serveDeviceRoutes } from './device-routes.js';

/**
 * `push.registerDevice` and `unregisterDevice` as shipped (dist/push.js), for native apps that
 * get FCM or APNs device tokens themselves, against a real HTTP server that holds the route
 * contract (device-routes.ts) and records each request, over Node's own fetch.
 */
describe('push.registerDevice and unregisterDevice', () => {
  let routes: Awaited<ReturnType<typeof serveDeviceRoutes>>;
  const recipient = randomUUID();
  const FCM = `fcm-token:${'A'.repeat(140)}_-`;
  const APNS = 'ab'.repeat(32);

  beforeAll(async () => {
    routes = await serveDeviceRoutes();
  });
  afterAll(() => routes?.close());
  beforeEach(() => {
    routes.state.requests.length = 0;
    routes.state.requireToken = false;
    routes.state.hang = false;
    routes.state.garble = false;
  });

  /** A HeraldPush on the route server, as a React Native app makes one. */
  const push = (extra: Record<string, unknown> = {}) => {
    let n = 0;
    return new HeraldPush({
      apiKey: 'hk_test_push',
      client: 'mobile',
      baseUrl: routes.baseUrl,
      device: 'phone-1',
      getToken: async () => `tok-${++n}`,
      ...extra,
    });
  };

  /** What a rejected call threw, as plain fields. */
  const failure = async (p: Promise<unknown>) => {
    const e = (await p.then(
      () => expect.fail('expected a rejection'),
      (x: unknown) => x,
    )) as HeraldError;
    return { name: e.name, code: e.code, kind: e.kind, field: e.field, status: e.httpStatus };
  };

  it('posts an FCM token with key, recipient, client, device and recipient_token; again, the same id', async () => {
    const p = push();
    const { id } = await p.registerDevice({ recipient, kind: 'fcm', token: FCM });
    expect(id).toMatch(/^[\w-]+$/);
    expect(routes.state.requests).toEqual([
      {
        method: 'POST',
        path: '/push/subscriptions',
        query: {},
        body: {
          api_key: 'hk_test_push',
          recipient,
          client: 'mobile',
          device: 'phone-1',
          kind: 'fcm',
          token: FCM,
          recipient_token: 'tok-1',
        },
      },
    ]);
    // The provider handed the same token again (every app start): the same registration.
    expect(await p.registerDevice({ recipient, kind: 'fcm', token: FCM })).toEqual({ id });
    expect(routes.state.requests.at(-1)?.body).toMatchObject({ recipient_token: 'tok-2' });
  });

  it('posts an APNs token with the device given, and no recipient_token for a key without tokens', async () => {
    const p = push({ getToken: undefined, device: false });
    const upper = recipient.toUpperCase();
    await p.registerDevice({ recipient: upper, kind: 'apns', token: APNS, device: 'iphone_2' });
    expect(routes.state.requests.at(-1)?.body).toEqual({
      api_key: 'hk_test_push',
      recipient,
      client: 'mobile',
      device: 'iphone_2',
      kind: 'apns',
      token: APNS,
    });
  });

  it('unregisterDevice deletes by id with key, recipient and a fresh recipient token', async () => {
    const p = push();
    const { id } = await p.registerDevice({ recipient, kind: 'apns', token: APNS });
    await p.unregisterDevice(id, { recipient });
    expect(routes.state.requests.at(-1)).toEqual({
      method: 'DELETE',
      path: `/push/subscriptions/${id}`,
      query: { api_key: 'hk_test_push', recipient, token: 'tok-2' },
      body: undefined,
    });
    expect(await failure(p.unregisterDevice(randomUUID(), { recipient }))).toEqual({
      name: 'HeraldError',
      code: 'not_found',
      // The core's kind for not_found, which a wrong baseUrl also gets.
      kind: 'wrong_endpoint',
      field: 'id',
      status: 404,
    });
  });

  it("passes Herald's refusal on: a key that requires tokens, called without one", async () => {
    routes.state.requireToken = true;
    const p = push({ getToken: undefined });
    expect(await failure(p.registerDevice({ recipient, kind: 'fcm', token: FCM }))).toEqual({
      name: 'HeraldError',
      code: 'token_required',
      kind: 'refused',
      field: 'recipient_token',
      status: 401,
    });
    const refused = await p.unregisterDevice(randomUUID(), { recipient }).catch((e) => e);
    expect(refused).toBeInstanceOf(HeraldError);
    expect(refused.code).toBe('token_required');
  });

  it('rejects with unexpected_response for an answer that is not Herald’s, network_error with no server', async () => {
    routes.state.garble = true;
    expect(await failure(push().registerDevice({ recipient, kind: 'fcm', token: FCM }))).toEqual({
      name: 'HeraldError',
      code: 'unexpected_response',
      kind: expect.any(String),
      field: undefined,
      status: 502,
    });
    const gone = push({ baseUrl: 'http://127.0.0.1:9' });
    expect(
      await failure(gone.registerDevice({ recipient, kind: 'fcm', token: FCM })),
    ).toMatchObject({ name: 'HeraldError', code: 'network_error', kind: 'network' });
  });

  it('gives up with timeout after timeoutMs when Herald never answers', async () => {
    routes.state.hang = true;
    const outcome = await failure(
      push().registerDevice({ recipient, kind: 'fcm', token: FCM, timeoutMs: 300 }),
    );
    expect(outcome).toMatchObject({ name: 'HeraldError', code: 'timeout', kind: 'network' });
    const e = (await push()
      .unregisterDevice('abc', { recipient, timeoutMs: 300 })
      .catch((x: unknown) => x)) as Error;
    expect(e.message).toContain('push.unregisterDevice did not finish within 300 ms');
  });

  it('checks every field before asking anyone, naming it', async () => {
    const p = push();
    const bad = async (o: Record<string, unknown>, message: string) =>
      expect(() =>
        p.registerDevice({ recipient, kind: 'fcm', token: FCM, ...o } as never),
      ).rejects.toThrow(
        expect.objectContaining({ name: 'TypeError', message: expect.stringContaining(message) }),
      );
    await bad({ recipient: 'nope' }, 'push.registerDevice needs recipient: a UUID v4');
    await bad({ kind: 'webpush' }, "needs kind: 'fcm'");
    await bad({ kind: undefined }, "needs kind: 'fcm'");
    await bad({ token: '' }, 'needs token: the device token');
    await bad({ token: 42 }, 'needs token: the device token');
    await bad({ token: 'x'.repeat(4097) }, 'token must be at most 4096 characters');
    await bad({ token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln' }, 'token is a JWT');
    await bad({ token: 'has space' }, 'printable ASCII without spaces');
    await bad({ kind: 'apns', token: 'xyz' }, 'APNs device token as hex');
    await bad({ kind: 'apns', token: 'abc' }, 'APNs device token as hex');
    await bad({ device: 'a b' }, 'device must be 1-64 of [A-Za-z0-9_-]');
    await bad({ device: 'd'.repeat(65) }, 'device must be 1-64 of [A-Za-z0-9_-]');
    for (const timeoutMs of [0, 300_001, 1.5])
      await bad({ timeoutMs }, 'timeoutMs must be an integer from 1 to 300000');
    await expect(() => p.unregisterDevice('', { recipient })).rejects.toThrow(/needs id/);
    await expect(() => p.unregisterDevice('a/b', { recipient })).rejects.toThrow(/needs id/);
    await expect(() => p.unregisterDevice('abc', { recipient: 'x' } as never)).rejects.toThrow(
      /unregisterDevice needs recipient/,
    );
    expect(routes.state.requests).toEqual([]);

    // The edges themselves are accepted.
    await p.registerDevice({ recipient, kind: 'fcm', token: 'x'.repeat(4096), timeoutMs: 300_000 });
    await p.registerDevice({
      recipient,
      kind: 'apns',
      token: 'AB',
      device: 'd'.repeat(64),
      timeoutMs: 1000,
    });
    expect(routes.state.requests.map((r) => r.method)).toEqual(['POST', 'POST']);
  });
});

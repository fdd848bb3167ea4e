import { randomUUID } from 'node:crypto';
import http from 'node:http';
import {
  eventually,
  type KeyObject,
  type PusherAppObject,
  type Stack,
  startStack,
} from '@herald/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pusherClient, refusedBy, signedPost } from './support/pusher.js';

/**
 * What the Pusher HTTP API (issue 41) refuses, on the real stack (auth and ingress as processes):
 * broken signatures, the limits at their edges, ids an app cannot map, a revoked bound key and a
 * durable event Herald could not take; each a Pusher-style plain-text answer, never a 200.
 */

const QUEUE_CAP = 2;
let stack: Stack;
let key: KeyObject;
let app: PusherAppObject;

beforeAll(async () => {
  stack = await startStack({
    services: ['auth', 'ingress-api'],
    env: {
      'ingress-api': {
        QUEUE_MAX_PER_RECIPIENT: String(QUEUE_CAP),
        // Apps stay cached for the whole file unless an invalidation drops them: the tests of
        // revocation, rotation and deletion pass only through rt.auth.invalidate.
        KEY_CACHE_TTL_MS: '300000',
        KEY_NEGATIVE_CACHE_TTL_MS: '300000',
        // Every 401 here counts against 127.0.0.1, and the polls below make many: the limit
        // itself is pusher-route.test.ts's.
        AUTH_FAIL_LIMIT: '0',
      },
    },
  });
  const { id: account } = await stack.createAccount();
  key = await stack.createKey({ account, kind: 'test', client: 'mobile' });
  app = await stack.createPusherApp({ account, keyId: key.id });
}, 180_000);
afterAll(async () => {
  await stack?.stop();
});

const BODY = JSON.stringify({ name: 'greet', data: '{"hi":1}', channels: ['news'] });
const nowS = () => Math.floor(Date.now() / 1000);

function metrics(): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(`http://127.0.0.1:${stack.opsPorts['ingress-api']}/metrics`, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => {
          text += c.toString('utf8');
        });
        res.on('end', () => resolve(text));
      })
      .on('error', reject);
  });
}

describe('signatures', () => {
  it('accepts a hand-signed request, and one 590 s old', async () => {
    expect((await signedPost(stack, app, '/events', BODY)).status).toBe(200);
    expect(
      (await signedPost(stack, app, '/events', BODY, { timestamp: nowS() - 590 })).status,
    ).toBe(200);
  });

  it('refuses with 401 plain text: a tampered body, a wrong body_md5, a stale timestamp', async () => {
    const tampered = await signedPost(stack, app, '/events', BODY, {
      sentBody: BODY.replace('news', 'newz'),
    });
    expect(tampered.status).toBe(401);
    expect(tampered.headers['content-type']).toMatch(/^text\/plain/);
    expect(tampered.text).toMatch(/^Invalid body_md5/);
    const md5 = await signedPost(stack, app, '/events', BODY, { md5: 'f'.repeat(32) });
    expect([md5.status, md5.text.slice(0, 16)]).toEqual([401, 'Invalid body_md5']);
    const stale = await signedPost(stack, app, '/events', BODY, { timestamp: nowS() - 601 });
    expect(stale.status).toBe(401);
    expect(stale.text).toMatch(/^Timestamp expired/);
  });

  it('refuses another key, another secret and an unknown app id with 401', async () => {
    const otherKey = await signedPost(stack, app, '/events', BODY, { key: 'a'.repeat(20) });
    expect([otherKey.status, otherKey.text.slice(0, 16)]).toEqual([401, 'Invalid auth_key']);
    const otherSecret = await signedPost(stack, app, '/events', BODY, { secret: 'b'.repeat(40) });
    expect(otherSecret.status).toBe(401);
    expect(otherSecret.text).toMatch(/^Invalid signature: you should have sent HmacSHA256Hex/);
    expect(otherSecret.text).not.toContain(app.secret);
    const unknown = await signedPost(stack, { ...app, app_id: '9999999999' }, '/events', BODY);
    expect(unknown.status).toBe(401);
    expect(unknown.text).toMatch(/^Unknown app_id "9999999999"/);
  });
});

describe('limits at their edges', () => {
  const channels = (n: number) => Array.from({ length: n }, (_, i) => `ch-${i}`);

  it('takes exactly 100 channels, refuses 101 with 400 naming channels', async () => {
    expect((await pusherClient(stack, app).trigger(channels(100), 'e', 'd')).status).toBe(200);
    const body = JSON.stringify({ name: 'e', data: 'd', channels: channels(101) });
    const res = await signedPost(stack, app, '/events', body);
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/^channels names 101 channels.*PUSHER_MAX_CHANNELS/);
  });

  it('takes a batch of exactly 10 events, refuses 11', async () => {
    const batch = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ channel: `ch-${i}`, name: 'e', data: 'd' }));
    const pusher = pusherClient(stack, app);
    expect((await pusher.triggerBatch(batch(10))).status).toBe(200);
    const res = await refusedBy(pusher.triggerBatch(batch(11)));
    expect(res.status).toBe(400);
    expect(res.body).toContain('PUSHER_MAX_BATCH_EVENTS');
  });

  it('takes data of exactly 10240 bytes, refuses 10241 with 413', async () => {
    const pusher = pusherClient(stack, app);
    expect((await pusher.trigger('news', 'e', 'x'.repeat(10_240))).status).toBe(200);
    const res = await refusedBy(pusher.trigger('news', 'e', 'x'.repeat(10_241)));
    expect(res.status).toBe(413);
    expect(res.body).toMatch(/^data is 10241 bytes/);
  });

  it('takes an event name of exactly 200 characters, refuses 201', async () => {
    expect((await pusherClient(stack, app).trigger('news', 'n'.repeat(200), 'd')).status).toBe(200);
    const body = JSON.stringify({ name: 'n'.repeat(201), data: 'd', channels: ['news'] });
    const res = await signedPost(stack, app, '/events', body);
    expect(res.status).toBe(400);
    expect(res.text).toContain('PUSHER_MAX_EVENT_NAME');
  });

  it('refuses a non-UUID user id of a uuid app with 400 naming it', async () => {
    const res = await refusedBy(pusherClient(stack, app).sendToUser('42', 'e', 'd'));
    expect(res.status).toBe(400);
    expect(res.body).toMatch(/^User id "42" is not a UUID v4/);
  });
});

describe('durable events Herald could not take', () => {
  it("answers the error's status, never 200, naming what was accepted in the headers", async () => {
    const user = randomUUID();
    const pusher = pusherClient(stack, app);
    for (let i = 0; i < QUEUE_CAP; i++) await pusher.sendToUser(user, 'e', String(i));
    const full = await signedPost(
      stack,
      app,
      '/batch_events',
      JSON.stringify({
        batch: [
          { channel: `#server-to-user-${randomUUID()}`, name: 'e', data: 'ok' },
          { channel: `#server-to-user-${user}`, name: 'e', data: 'too many' },
        ],
      }),
    );
    expect(full.status).toBe(507);
    expect(full.headers['content-type']).toMatch(/^text\/plain/);
    expect(full.text).toContain('QUEUE_MAX_PER_RECIPIENT');
    expect(full.headers['x-herald-status']).toBe('queued');
    expect(String(full.headers['x-herald-id'])).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('the bound key and the counts', () => {
  it('counts requests by route and outcome', async () => {
    await signedPost(stack, app, '/events', BODY, { md5: 'f'.repeat(32) });
    const text = await metrics();
    const count = (name: string, labels: string) =>
      Number(
        new RegExp(`${name}\\{${labels},service="ingress-api"\\} (\\d+)`).exec(text)?.[1] ?? 0,
      );
    expect(count('herald_pusher_requests_total', 'route="events",outcome="ok"')).toBeGreaterThan(0);
    expect(
      count('herald_pusher_requests_total', 'route="events",outcome="refused"'),
    ).toBeGreaterThan(0);
    expect(
      count('herald_pusher_requests_total', 'route="batch_events",outcome="refused"'),
    ).toBeGreaterThan(0);
    // The durable events are dispatches too: the two sendToUser above, queued.
    expect(count('herald_dispatch_total', 'transport="pusher",outcome="queued"')).toBeGreaterThan(
      1,
    );
  });

  it('refuses once the bound key is revoked (the cached app is dropped at once)', async () => {
    expect((await signedPost(stack, app, '/events', BODY)).status).toBe(200);
    await stack.revokeKey(key.id);
    await eventually(
      async () => (await signedPost(stack, app, '/events', BODY)).status === 401,
      'the revoked key refused',
      30_000,
    );
    const res = await signedPost(stack, app, '/events', BODY);
    expect(res.text.toLowerCase()).toContain('revoked');
  });

  it('takes a rotated secret and refuses the old one, then a deleted app, well within the cache TTL', async () => {
    const { id: account } = await stack.createAccount();
    const own = await stack.createKey({ account, kind: 'test', client: 'mobile' });
    const first = await stack.createPusherApp({ account, keyId: own.id });
    // Cached by a first use: what follows must drop it, not wait out KEY_CACHE_TTL_MS.
    expect((await signedPost(stack, first, '/events', BODY)).status).toBe(200);
    const rotated = await stack.accountApi(
      account,
      'POST',
      `/v1/pusher/apps/${first.app_id}/rotate-secret`,
    );
    expect(rotated.status).toBe(200);
    const next = { ...first, secret: rotated.body.secret as string };
    const status = async (a: PusherAppObject) =>
      (await signedPost(stack, a, '/events', BODY)).status;
    await eventually(async () => (await status(next)) === 200, 'the new secret taken', 30_000);
    expect(await status(first)).toBe(401);
    const gone = await stack.accountApi(account, 'DELETE', `/v1/pusher/apps/${first.app_id}`);
    expect(gone.status).toBe(204);
    await eventually(async () => (await status(next)) === 401, 'the deleted app refused', 30_000);
    const res = await signedPost(stack, next, '/events', BODY);
    expect(res.text).toMatch(/^Unknown app_id/);
  });
});

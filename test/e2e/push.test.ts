import { randomBytes } from 'node:crypto';
import { get, PushService, post, request } from '@herald/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, eventually, recipient, type Tenant, useStack } from './fixtures.js';

/**
 * The push fallback through every service (issue 40): the admin CLI makes the account's VAPID key
 * (status service, over rt.pushapi.request), a browser's subscription is posted to ingress's
 * route with the key, an event of a `--push-after-ms` key that no socket proves in time reaches a
 * real HTTPS push service encrypted (RFC 8291, decrypted here with the subscription's keys) and
 * signed (RFC 8292, verified with jose), and a proof before then sends nothing.
 */
let pushService: PushService;
const AFTER_MS = 400;
const statusEnv: Record<string, string> = {
  WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
  // The push service is on 127.0.0.1: allowed here as `make dev` allows it, never in production.
  PUSH_ALLOW_PRIVATE: 'true',
};
beforeAll(async () => {
  pushService = await PushService.start();
  statusEnv.PUSH_CA_FILE = pushService.caFile;
});
afterAll(() => pushService?.stop());

const stack = useStack({
  services: ['auth', 'ingress-api', 'socket-edge', 'status'],
  env: { status: statusEnv },
});

const TEST_TIMEOUT_MS = 120_000;
/** How long a push may take on a loaded machine: its window, the status writer's batch wait, the claim. */
const WAIT_MS = 30_000;

interface Pushed {
  id: string;
  ids: string[];
  count: number;
  title: string;
  body?: string;
  url?: string;
  tag: string;
  payload?: unknown;
}

/** A tenant with a VAPID key and a push key, and a recipient subscribed at the push service. */
async function subscribedRecipient(afterMs = AFTER_MS) {
  const { id: account } = await stack().createAccount();
  const vapid = (await stack().admin([
    'push',
    'configure',
    '--account',
    account,
    '--vapid',
    'generate',
    '--vapid-subject',
    'mailto:ops@example.com',
    '--json',
  ])) as { public_key: string };
  const tenant: Tenant = {
    account,
    key: await stack().createKey({ account, kind: 'test', push: { afterMs } }),
  };
  const to = recipient();
  const subscription = pushService.subscribe();
  const res = await post(
    stack().baseUrl,
    stack().ca,
    {
      api_key: tenant.key.key,
      recipient: to,
      client: 'mobile',
      kind: 'webpush',
      subscription,
    },
    { path: '/push/subscriptions' },
  );
  expect(res.status, res.text).toBe(201);
  return { tenant, to, subscription, vapid, subscriptionId: res.body.id as string };
}

function notifyWith(tenant: Tenant, to: string, payload: unknown, push?: unknown) {
  return post(stack().baseUrl, stack().ca, {
    recipient: to,
    payload,
    api_key: tenant.key.key,
    client: 'mobile',
    ...(push === undefined ? {} : { push }),
  });
}

const messages = (endpoint: string) =>
  pushService.accepted(endpoint).map((a) => a.message as Pushed);

describe('push fallback through the whole stack', () => {
  it(
    'pushes an offline event, encrypted and VAPID-signed, with the event id and its content',
    async () => {
      const { tenant, to, subscription, vapid } = await subscribedRecipient();
      const key = await get(
        stack().baseUrl,
        stack().ca,
        `/push/vapid-public-key?api_key=${encodeURIComponent(tenant.key.key)}`,
      );
      expect(key.status).toBe(200);
      expect(key.body.public_key).toBe(vapid.public_key);

      const res = await notifyWith(
        tenant,
        to,
        { order: 7 },
        { title: 'Order shipped', body: 'Your order is on its way', url: '/orders/7' },
      );
      expect(res.status).toBe(202);
      await eventually(() => messages(subscription.endpoint).length >= 1, 'the push', WAIT_MS);
      const [arrival] = pushService.accepted(subscription.endpoint);
      expect(arrival?.error).toBeNull();
      expect(arrival?.contentEncoding).toBe('aes128gcm');
      expect(arrival?.vapid).toMatchObject({
        aud: pushService.origin,
        sub: 'mailto:ops@example.com',
        k: vapid.public_key,
      });
      expect(Number(arrival?.ttl)).toBeGreaterThan(0);
      expect(arrival?.message).toMatchObject({
        id: res.body.id,
        ids: [res.body.id],
        count: 1,
        title: 'Order shipped',
        body: 'Your order is on its way',
        url: '/orders/7',
        payload: { order: 7 },
      });

      // /events/status says it was pushed, to one subscription.
      await eventually(
        async () => {
          const s = await post(
            stack().baseUrl,
            stack().ca,
            { api_key: tenant.key.key, ids: [res.body.id] },
            { path: '/events/status' },
          );
          return s.body.events?.[0]?.pushed?.subscriptions === 1;
        },
        'pushed on /events/status',
        WAIT_MS,
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'sends nothing for an event a socket proves before it is due, and never pushes a live one',
    async () => {
      // A window no connect on a loaded machine outlasts: the socket's proof always comes first.
      const { tenant, to, subscription } = await subscribedRecipient(5000);
      const queued = await notifyWith(tenant, to, { n: 1 }, { title: 'first' });
      expect(queued.status).toBe(202);
      const socket = await connect(stack(), {
        apiKey: tenant.key.key,
        recipient: to,
        v1: true,
      });
      await socket.waitForEvents(1);
      const live = await notifyWith(tenant, to, { n: 2 }, { title: 'live' });
      expect(live.status).toBe(200);
      await socket.close();
      // A later offline event is pushed: once it has arrived, anything due earlier would have too.
      const sentinel = await notifyWith(tenant, to, { n: 3 }, { title: 'sentinel' });
      expect(sentinel.status).toBe(202);
      await eventually(
        () => messages(subscription.endpoint).some((m) => m.ids.includes(sentinel.body.id)),
        'the sentinel push',
        WAIT_MS,
      );
      const pushedIds = messages(subscription.endpoint).flatMap((m) => m.ids);
      expect(pushedIds).not.toContain(queued.body.id);
      expect(pushedIds).not.toContain(live.body.id);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'collapses a backlog of one recipient into one push with the count, and stops after DELETE',
    async () => {
      // 20 events sent one after another well inside the window (2 s): one push stands for all.
      const { tenant, to, subscription, subscriptionId } = await subscribedRecipient(2000);
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) {
        const r = await notifyWith(tenant, to, { i }, { title: `event ${i}` });
        expect(r.status).toBe(202);
        ids.push(r.body.id as string);
      }
      await eventually(
        () => messages(subscription.endpoint).flatMap((m) => m.ids).length >= 20,
        'every event covered by a push',
        WAIT_MS,
      );
      const all = messages(subscription.endpoint);
      expect(all).toHaveLength(1);
      expect(all[0]?.count).toBe(20);
      expect([...(all[0]?.ids ?? [])].sort()).toEqual([...ids].sort());
      expect(all[0]?.title).toBe('event 19');

      const query = new URLSearchParams({ api_key: tenant.key.key, recipient: to });
      const del = await request(
        'DELETE',
        `${stack().baseUrl}/push/subscriptions/${subscriptionId}?${query}`,
        stack().ca,
      );
      expect(del.status).toBe(204);
      const list = (await stack().admin([
        'push',
        'subscriptions',
        '--account',
        tenant.account,
        '--json',
      ])) as { subscriptions: unknown[] };
      expect(list.subscriptions).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it('refuses another account’s key on this recipient’s subscription', async () => {
    const { to, subscriptionId } = await subscribedRecipient();
    const { id: other } = await stack().createAccount();
    const otherKey = await stack().createKey({ account: other, kind: 'test' });
    const query = new URLSearchParams({ api_key: otherKey.key, recipient: to });
    const del = await request(
      'DELETE',
      `${stack().baseUrl}/push/subscriptions/${subscriptionId}?${query}`,
      stack().ca,
    );
    expect(del.status).toBe(404);
  });
});

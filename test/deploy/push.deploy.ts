import { randomUUID } from 'node:crypto';
import { type PushService, post } from '@herald/testkit';
import { type ComposeStack, composeStackFromEnv } from '@herald/testkit/compose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../e2e/fixtures.js';
import { pushesTo, startPushService } from './push-service.js';

// The push fallback (issue 40) through the docker compose stack (beside compose.deploy.ts, which
// is long enough): the admin CLI in the auth container makes an account, its VAPID key (status
// keeps it sealed), a key with --push-after-ms, a Web Push subscription posted through the
// published ingress port for a recipient that never connects, and the status container's push
// sender reaching the test's push service on the Docker host (push-service.ts), which decrypts
// the push and verifies its VAPID header.

/** The push key's window: no socket proves the event, so it is pushed after this. */
const PUSH_AFTER_MS = 1000;
/** How long the push may take on a loaded machine (the window, the writer's batch, the claim). */
const PUSH_WAIT_MS = 60_000;

let stack: ComposeStack;
let pushService: PushService;

beforeAll(async () => {
  stack = composeStackFromEnv();
  pushService = await startPushService(stack.project);
});

afterAll(() => pushService?.stop());

describe('the docker compose stack', () => {
  it('pushes an event no socket proved: VAPID made with the admin CLI, a subscription at a push service on the host, decrypted there with the event id, and pushed on /events/status', async () => {
    const demo = stack.demo();
    // An account of its own: the demo account's one Test key is taken, and the other tests use it.
    const account = await stack.admin<{ id: string }>(
      'account',
      'create',
      '--email',
      `push-${randomUUID()}@example.com`,
    );
    const vapid = await stack.admin<{ public_key: string }>(
      'push',
      'configure',
      '--account',
      account.id,
      '--vapid',
      'generate',
      '--vapid-subject',
      'mailto:ops@example.com',
    );
    expect(vapid.public_key).toMatch(/^[A-Za-z0-9_-]{87}$/);
    const key = await stack.admin<{ key: string }>(
      'key',
      'create',
      '--account',
      account.id,
      '--kind',
      'test',
      '--client',
      'mobile',
      '--push-after-ms',
      String(PUSH_AFTER_MS),
    );
    const to = randomUUID();
    const subscription = pushService.subscribe();
    const registered = await post(
      demo.baseUrl,
      stack.ca,
      { api_key: key.key, recipient: to, client: 'mobile', kind: 'webpush', subscription },
      { path: '/push/subscriptions' },
    );
    expect(registered.status, registered.text).toBe(201);

    const sent = await post(demo.baseUrl, stack.ca, {
      recipient: to,
      payload: { order: 7 },
      api_key: key.key,
      client: 'mobile',
      push: { title: 'Order shipped', body: 'On its way' },
    });
    expect(sent.status, sent.text).toBe(202);
    const id = sent.body.id as string;
    await eventually(
      () => pushesTo(pushService, subscription.endpoint).length >= 1,
      'the push at the push service on the host',
      PUSH_WAIT_MS,
    );
    const [arrival] = pushService.accepted(subscription.endpoint);
    expect(arrival?.error).toBeNull();
    expect(arrival?.contentEncoding).toBe('aes128gcm');
    expect(arrival?.vapid).toMatchObject({
      aud: pushService.origin,
      sub: 'mailto:ops@example.com',
      k: vapid.public_key,
    });
    expect(arrival?.message).toMatchObject({
      id,
      ids: [id],
      count: 1,
      title: 'Order shipped',
      body: 'On its way',
      payload: { order: 7 },
    });

    let status: unknown;
    await eventually(
      async () => {
        const res = await post(
          demo.baseUrl,
          stack.ca,
          { api_key: key.key, ids: [id] },
          { path: '/events/status' },
        );
        status = res.body;
        return res.body.events?.[0]?.pushed?.subscriptions === 1;
      },
      'pushed to one subscription on POST /events/status',
      PUSH_WAIT_MS,
    );
    expect(status).toMatchObject({ events: [{ id, status: 'pending' }] });
    // One push: nothing repeated it while /events/status was polled.
    expect(pushService.arrivals(subscription.endpoint)).toHaveLength(1);
  });
});

import { randomUUID } from 'node:crypto';
import { eventually } from '@herald/testkit';
import { type ComposeStack, composeStackFromEnv } from '@herald/testkit/compose';
import type PusherServer from 'pusher';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  heraldIdOf,
  type PusherApp,
  type PusherJsClient,
  pusherJs,
  pusherServer,
} from './pusher-clients.js';

// The Pusher door (issue 41) through the docker compose stack, with nothing set beyond what
// `make compose-up` sets: an app made with the admin CLI in the auth container, stock pusher-js on
// the published edge port signing in with the `pusher` library's authenticateUser, and the
// `pusher` library's sendToUser and trigger on the published ingress port. A user event is live
// (X-Herald-Status: sent) while the user is signed in, queued while it is not, and delivered once
// pusher-js reconnects and signs in again; a public channel's trigger reaches its subscriber.

/** Most time a step may take on a loaded machine. */
const WAIT_MS = 60_000;

let stack: ComposeStack;
let app: PusherApp;
let server: PusherServer;
let client: PusherJsClient | undefined;

beforeAll(async () => {
  stack = composeStackFromEnv();
  // An account of its own: the demo account's one Test key is taken, and the other tests use it.
  const account = await stack.admin<{ id: string }>(
    'account',
    'create',
    '--email',
    `pusher-${randomUUID()}@example.com`,
  );
  const key = await stack.admin<{ id: string }>(
    'key',
    'create',
    '--account',
    account.id,
    '--kind',
    'test',
    '--client',
    'mobile',
  );
  app = await stack.admin<PusherApp>(
    'pusher-app',
    'create',
    '--account',
    account.id,
    '--key-id',
    key.id,
  );
  server = pusherServer(stack.demo().baseUrl, stack.ca, app);
});

afterAll(() => client?.disconnect());

/** Between two sends that an eventually repeats: false, after a breath. */
const pause = () => new Promise<false>((r) => setTimeout(() => r(false), 250));

/** sendToUser through the published ingress port: the HTTP status and Herald's headers. */
async function sendToUser(user: string, data: object) {
  const res = await server.sendToUser(user, 'note', data);
  return {
    status: res.status,
    id: res.headers.get('x-herald-id') ?? '',
    herald: res.headers.get('x-herald-status') ?? '',
  };
}

describe('the docker compose stack', () => {
  it('serves stock pusher-js and the pusher library: a signed-in user gets sendToUser live, queued while away and delivered on its next sign-in, and a public channel its trigger', async () => {
    expect(app.app_id).toMatch(/^\d{10}$/);
    expect(app.key).toMatch(/^[0-9a-f]{20}$/);
    const user = randomUUID();
    const pusher = pusherJs(stack.demo().wsUrl, stack.ca, app, server, user);
    client = pusher;
    const got: unknown[] = [];
    const flashes: unknown[] = [];
    pusher.user.bind('note', (data) => got.push(data));
    pusher.signin();
    const news = pusher.subscribe('news');
    let subscribed = false;
    news.bind('pusher:subscription_succeeded', () => {
      subscribed = true;
    });
    news.bind('flash', (data) => flashes.push(data));

    // Live: until the signed-in socket joined its recipient's session sendToUser queues, and
    // those queued copies reach it too once it has.
    let live = { status: 0, id: '', herald: '' };
    await eventually(
      async () => {
        live = await sendToUser(user, { step: 'live' });
        expect(live.status).toBe(200);
        return live.herald === 'sent' || pause();
      },
      'a sendToUser answered X-Herald-Status: sent',
      WAIT_MS,
    );
    expect(live.id).toMatch(/^[0-9a-f-]{36}$/);
    await eventually(
      () => got.some((d) => heraldIdOf(d) === live.id),
      'the sent event at pusher.user',
      WAIT_MS,
    );
    expect(got).toContainEqual({ herald_id: live.id, step: 'live' });

    // Away: nothing can prove it, so it is queued, and it arrives after the next sign-in.
    pusher.disconnect();
    await eventually(
      () => pusher.connection.state === 'disconnected',
      'pusher-js disconnected',
      WAIT_MS,
    );
    const away = await sendToUser(user, { step: 'away' });
    expect(away.status).toBe(200);
    expect(away.herald).toBe('queued');
    expect(away.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(got.some((d) => heraldIdOf(d) === away.id)).toBe(false);
    pusher.connect();
    await eventually(
      () => got.some((d) => heraldIdOf(d) === away.id),
      'the queued event at pusher.user after pusher-js reconnected and signed in again',
      WAIT_MS,
    );
    expect(got).toContainEqual({ herald_id: away.id, step: 'away' });

    // A public channel: live fan-out (at most once), so trigger until one arrives.
    await eventually(() => subscribed, 'subscribed to news again', WAIT_MS);
    let triggers = 0;
    await eventually(
      async () => {
        const res = await server.trigger('news', 'flash', { n: ++triggers });
        expect(res.status).toBe(200);
        await pause();
        return flashes.length > 0;
      },
      'a trigger on news at its subscriber',
      WAIT_MS,
    );
    expect(flashes[0]).toMatchObject({ n: expect.any(Number) });
  });
});

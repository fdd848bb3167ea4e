import { randomUUID } from 'node:crypto';
import { eventually, type PusherAppObject } from '@herald/testkit';
import type PusherServer from 'pusher';
import { afterEach, describe, expect, it } from 'vitest';
import { useStack } from './fixtures.js';
import {
  connected,
  type PusherClient,
  pusherBackend,
  pusherClient,
  subscribed,
} from './pusher-fixtures.js';

/**
 * The Pusher door with nothing but the stock libraries on both sides (issue 41): pusher-js (Node
 * build) on the edge over TLS, the `pusher` server library on ingress, auth's real apps. Fan-out on
 * public and private channels, `sendToUser` live to every signed-in socket of the user and stored
 * while the user is away, `terminateUserConnections`, and the tenant boundary.
 */

const stack = useStack();
const open: PusherClient[] = [];
afterEach(() => {
  for (const c of open.splice(0)) c.disconnect();
});

async function newApp(userIds: 'uuid' | 'any' = 'any') {
  const s = stack();
  const { id: account } = await s.createAccount();
  const key = await s.createKey({ account, kind: 'test', client: 'mobile' });
  const app = await s.createPusherApp({ account, keyId: key.id, userIds });
  return { app, backend: pusherBackend(s, app) };
}

function client(app: PusherAppObject, backend: PusherServer, o = {}): PusherClient {
  const c = pusherClient(stack(), app, backend, o);
  open.push(c);
  return c;
}

/** What `bind(event)` handed the app, per client. */
function collect(bindable: { bind(e: string, cb: (d: unknown) => void): void }, event: string) {
  const got: Array<Record<string, unknown>> = [];
  bindable.bind(event, (d) => got.push(d as Record<string, unknown>));
  return got;
}

/** `sendToUser` until a socket proved one (a signed-in socket joins its user a moment later). */
async function sendUntilSent(backend: PusherServer, user: string, body: object) {
  let id = '';
  await eventually(
    async () => {
      const res = await backend.sendToUser(user, 'note', body);
      id = res.headers.get('x-herald-id') ?? '';
      return res.headers.get('x-herald-status') === 'sent';
    },
    'a sendToUser answered sent',
    30_000,
  );
  return id;
}

describe('the Pusher door with the stock libraries', () => {
  it('fans trigger out to every subscriber of public and private channels, but the sender', async () => {
    const { app, backend } = await newApp();
    const a = client(app, backend);
    const b = client(app, backend);
    const [aId] = await Promise.all([connected(a), connected(b)]);
    const got = [a, b].map((c) => {
      const news = c.subscribe('news');
      const orders = c.subscribe('private-orders');
      return { ready: Promise.all([subscribed(news), subscribed(orders)]), news, orders };
    });
    await Promise.all(got.map((g) => g.ready));
    const news = got.map((g) => collect(g.news, 'headline'));
    const orders = got.map((g) => collect(g.orders, 'headline'));

    const res = await backend.trigger(['news', 'private-orders'], 'headline', { text: 'hi' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    await eventually(
      () => [...news, ...orders].every((list) => list.length === 1),
      'the headline on both channels at both clients',
      20_000,
    );
    expect(news[0]).toEqual([{ text: 'hi' }]);
    expect(orders[1]).toEqual([{ text: 'hi' }]);

    // Pusher's socket_id: the publishing client's own socket is skipped.
    await backend.trigger('news', 'headline', { text: 'not to a' }, { socket_id: aId });
    await eventually(() => news[1]?.length === 2, 'the second headline at b', 20_000);
    expect(news[1]?.[1]).toEqual({ text: 'not to a' });
    await backend.trigger('news', 'headline', { text: 'to both' });
    await eventually(() => news[0]?.length === 2, 'the third headline at a', 20_000);
    expect(news[0]?.map((d) => d.text)).toEqual(['hi', 'to both']);
  });

  it('refuses a private channel whose signature was tampered with', async () => {
    const { app, backend } = await newApp();
    const c = client(app, backend, {
      channelAuth: (socketId: string, channel: string) => {
        const { auth } = backend.authorizeChannel(socketId, channel);
        return { auth: `${auth.slice(0, -1)}${auth.endsWith('0') ? '1' : '0'}` };
      },
    });
    await connected(c);
    const refused = await subscribed(c.subscribe('private-orders')).then(
      () => undefined,
      (err: { detail?: { status?: number } }) => err.detail,
    );
    expect(refused?.status).toBe(401);
  });

  it('sends to every signed-in socket of the user, and keeps what comes while the user is away', async () => {
    const { app, backend } = await newApp();
    const user = `user-${randomUUID().slice(0, 8)}`;
    const phone = client(app, backend, { userId: user });
    const laptop = client(app, backend, { userId: user });
    const atPhone = collect(phone.user, 'note');
    const atLaptop = collect(laptop.user, 'note');
    phone.signin();
    laptop.signin();
    await Promise.all([connected(phone), connected(laptop)]);
    const live = await sendUntilSent(backend, user, { n: 'live' });
    await eventually(
      () => [atPhone, atLaptop].every((list) => list.some((d) => d.herald_id === live)),
      'the live note at both of the user',
      20_000,
    );

    phone.disconnect();
    laptop.disconnect();
    await eventually(
      async () =>
        (await backend.sendToUser(user, 'probe', {})).headers.get('x-herald-status') === 'queued',
      'the user gone from every edge',
      30_000,
    );
    const away = await backend.sendToUser(user, 'note', { n: 'away' });
    expect(away.status).toBe(200);
    expect(away.headers.get('x-herald-status')).toBe('queued');
    const awayId = away.headers.get('x-herald-id');

    const back = client(app, backend, { userId: user });
    const atBack = collect(back.user, 'note');
    back.signin();
    await eventually(
      () => atBack.some((d) => d.herald_id === awayId),
      'the stored note after sign-in',
      30_000,
    );
    expect(atBack.find((d) => d.herald_id === awayId)).toEqual({ herald_id: awayId, n: 'away' });
  });

  it('closes the user’s sockets on terminateUserConnections', async () => {
    const { app, backend } = await newApp();
    const user = `user-${randomUUID().slice(0, 8)}`;
    const c = client(app, backend, { userId: user });
    const other = client(app, backend, { userId: `${user}-other` });
    c.signin();
    other.signin();
    await sendUntilSent(backend, user, { n: 1 });
    await sendUntilSent(backend, `${user}-other`, { n: 1 });
    const res = await backend.terminateUserConnections(user);
    expect(res.status).toBe(200);
    await eventually(() => c.connection.state !== 'connected', 'the user’s socket closed', 20_000);
    expect(other.connection.state).toBe('connected');
  });

  it('never lets an app of one account reach a user of another', async () => {
    const a = await newApp('uuid');
    const b = await newApp('uuid');
    const user = randomUUID();
    const c = client(a.app, a.backend, { userId: user });
    const got = collect(c.user, 'note');
    c.signin();
    await sendUntilSent(a.backend, user, { from: 'a', seq: 1 });
    const fromB = await b.backend.sendToUser(user, 'note', { from: 'b' });
    // B's app names the same user id, but its account's recipient has no socket: stored for B.
    expect(fromB.headers.get('x-herald-status')).toBe('queued');
    await sendUntilSent(a.backend, user, { from: 'a', seq: 2 });
    await eventually(() => got.some((d) => d.seq === 2), 'the second note of a', 20_000);
    expect(got.filter((d) => d.from === 'b')).toEqual([]);
  });
});

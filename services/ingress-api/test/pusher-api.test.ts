import { randomUUID } from 'node:crypto';
import { pusherRecipient } from '@herald/access';
import {
  PusherChannelMessage,
  PusherEnvelope,
  PusherTerminate,
  pusherSubjects,
} from '@herald/proto';
import {
  eventually,
  type KeyObject,
  openSocket,
  type PusherAppObject,
  post,
  type Stack,
  startStack,
} from '@herald/testkit';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuedMessages } from './support/fixture.js';
import { collect, pusherClient, signedPost } from './support/pusher.js';

/**
 * Pusher's HTTP API (issue 41) on the real stack (auth, ingress, edge and status as processes,
 * a private nats-server and Postgres), driven by the stock `pusher` library as the oracle client.
 */

let stack: Stack;
let nc: NatsConnection;
let account: string;
let key: KeyObject;
let app: PusherAppObject;

beforeAll(async () => {
  stack = await startStack({ services: ['auth', 'ingress-api', 'socket-edge', 'status'] });
  nc = await connect(stack.nats.connectOptions());
  ({ id: account } = await stack.createAccount());
  key = await stack.createKey({ account, kind: 'test', client: 'mobile' });
  app = await stack.createPusherApp({
    account,
    keyId: key.id,
    userChannel: 'private-App.Models.User.{id}',
  });
}, 180_000);
afterAll(async () => {
  await nc?.close();
  await stack?.stop();
});

const statusOf = async (apiKey: string, id: string): Promise<string | undefined> => {
  const res = await post(
    stack.baseUrl,
    stack.ca,
    { api_key: apiKey, ids: [id] },
    {
      path: '/events/status',
    },
  );
  expect(res.status).toBe(200);
  return res.body.events[0]?.status;
};

const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe('the Pusher HTTP API with the pusher library', () => {
  it('trigger to a public channel fans out on rt.pch, the socket id passed through', async () => {
    const seen = await collect(nc, pusherSubjects.channel(account, app.app_id, 'news'));
    const res = await pusherClient(stack, app).trigger(
      'news',
      'greet',
      { hi: 1 },
      {
        socket_id: '123.456',
      },
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect(res.headers.get('x-herald-status')).toBeNull();
    await eventually(() => seen.messages.length === 1, 'the fan-out message', 30_000);
    expect(PusherChannelMessage.parse(seen.messages[0])).toEqual({
      v: 1,
      event: 'greet',
      channel: 'news',
      data: '{"hi":1}',
      socket_id: '123.456',
    });
    seen.stop();
  });

  it('sendToUser to an offline user queues it: the header says so, the status and queue hold it', async () => {
    const user = randomUUID();
    const res = await pusherClient(stack, app).sendToUser(user, 'note', { n: 1 });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect(res.headers.get('x-herald-status')).toBe('queued');
    const id = res.headers.get('x-herald-id') ?? '';
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const [stored] = await queuedMessages(await nc.jetstreamManager(), user, account);
    expect(PusherEnvelope.parse(JSON.parse(text(stored?.data ?? new Uint8Array())))).toEqual({
      event: 'note',
      channel: `#server-to-user-${user}`,
      data: '{"n":1}',
    });
    await eventually(async () => (await statusOf(key.key, id)) === 'pending', 'pending', 30_000);
  });

  it('sends to a user with a socket live: sent, proven by the socket', async () => {
    const user = randomUUID();
    const socket = openSocket(stack.wsUrl, stack.ca, { apiKey: key.key, recipient: user });
    await socket.opened;
    const res = await pusherClient(stack, app).trigger(
      `private-App.Models.User.${user}`,
      'note',
      'plain',
    );
    expect(res.headers.get('x-herald-status')).toBe('sent');
    const [frame] = await socket.waitForFrames(1);
    expect(JSON.parse(frame?.text ?? '')).toEqual({
      event: 'note',
      channel: `private-App.Models.User.${user}`,
      data: 'plain',
    });
    await socket.close();
  });

  it('triggerBatch: durable and fan-out events together, headers in order, info answered', async () => {
    const [u1, u2] = [randomUUID(), randomUUID()];
    const seen = await collect(nc, pusherSubjects.channel(account, app.app_id, 'feed'));
    const pusher = pusherClient(stack, app);
    const res = await pusher.triggerBatch([
      { channel: `#server-to-user-${u1}`, name: 'a', data: '1' },
      { channel: 'feed', name: 'b', data: '2' },
      { channel: `private-App.Models.User.${u2}`, name: 'c', data: '3', info: 'user_count' },
    ]);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ batch: [{}, {}, {}] });
    expect(res.headers.get('x-herald-status')).toBe('queued,queued');
    const ids = (res.headers.get('x-herald-id') ?? '').split(',');
    expect(ids).toHaveLength(2);
    const jsm = await nc.jetstreamManager();
    expect((await queuedMessages(jsm, u1, account)).map((m) => m.header.get('Herald-Id'))).toEqual([
      ids[0],
    ]);
    expect((await queuedMessages(jsm, u2, account)).map((m) => m.header.get('Herald-Id'))).toEqual([
      ids[1],
    ]);
    await eventually(() => seen.messages.length === 1, 'the fan-out message', 30_000);
    seen.stop();
    const plain = await pusher.triggerBatch([{ channel: 'feed', name: 'b', data: '2' }]);
    expect(await plain.json()).toEqual({});
  });

  it('POST /apps/{id}/users/{uid}/events is the same durable event as sendToUser', async () => {
    const user = randomUUID();
    const body = JSON.stringify({ name: 'note', data: '{"n":2}' });
    const res = await signedPost(stack, app, `/users/${user}/events`, body);
    expect([res.status, res.body]).toEqual([200, {}]);
    expect(res.headers['x-herald-status']).toBe('queued');
    const [stored] = await queuedMessages(await nc.jetstreamManager(), user, account);
    expect(JSON.parse(text(stored?.data ?? new Uint8Array()))).toEqual({
      event: 'note',
      channel: `#server-to-user-${user}`,
      data: '{"n":2}',
    });
  });

  it('terminateUserConnections publishes PusherTerminate on rt.pterm for the recipient', async () => {
    const user = randomUUID();
    const seen = await collect(nc, pusherSubjects.terminate(account, user));
    const res = await pusherClient(stack, app).terminateUserConnections(user);
    expect(res.status).toBe(200);
    await eventually(() => seen.messages.length === 1, 'the terminate message', 30_000);
    expect(PusherTerminate.parse(seen.messages[0])).toEqual({ v: 1, app_id: app.app_id });
    seen.stop();
  });

  it("an `any` app maps any user id to its stable recipient, in the app's account", async () => {
    const anyApp = await stack.createPusherApp({ account, keyId: key.id, userIds: 'any' });
    const res = await pusherClient(stack, anyApp).sendToUser('42', 'note', 'x');
    expect(res.headers.get('x-herald-status')).toBe('queued');
    const recipient = pusherRecipient(anyApp.app_id, '42', 'any') ?? '';
    const stored = await queuedMessages(await nc.jetstreamManager(), recipient, account);
    expect(stored.map((m) => m.header.get('Herald-Id'))).toEqual([res.headers.get('x-herald-id')]);
  });

  it("an app of account B reaches only B's recipients, whatever user it names", async () => {
    const { id: accountB } = await stack.createAccount();
    const keyB = await stack.createKey({ account: accountB, kind: 'test', client: 'mobile' });
    const appB = await stack.createPusherApp({ account: accountB, keyId: keyB.id });
    const user = randomUUID();
    const res = await pusherClient(stack, appB).sendToUser(user, 'note', 'from B');
    const id = res.headers.get('x-herald-id') ?? '';
    const jsm = await nc.jetstreamManager();
    expect((await queuedMessages(jsm, user, accountB)).length).toBe(1);
    expect(await queuedMessages(jsm, user, account)).toEqual([]);
    await eventually(async () => (await statusOf(keyB.key, id)) === 'pending', 'B sees it', 30_000);
    expect(await statusOf(key.key, id)).toBe('unknown');
  });
});

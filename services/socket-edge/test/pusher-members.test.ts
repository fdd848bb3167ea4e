import { randomUUID } from 'node:crypto';
import { pusherRecipient } from '@herald/access';
import { pusherSubjects } from '@herald/proto';
import { JSONCodec } from 'nats';
import { describe, expect, it } from 'vitest';
import {
  ACCOUNT_A,
  consumerInfo,
  queueEvent,
  type RunningEdge,
  type Stack,
  waitUntil,
} from './fixture.js';
import {
  connected,
  currentUser,
  liveOnceMember,
  type Pusher,
  type PusherApps,
  pusherClient,
  type RawPusher,
  rawPusher,
  type TestApp,
  usePusherDoor,
} from './pusher-fixture.js';

const json = JSONCodec();

let stack: Stack;
let edge: RunningEdge;
let apps: PusherApps;
const clients: Pusher[] = [];

usePusherDoor(
  (d) => {
    ({ stack, edge, apps } = d);
  },
  { env: { LIVE_PROOF_TIMEOUT_MS: '60000' }, clients },
);

/** A signed-in pusher-js client of `test` as user `id`, and what its `pusher.user` received. */
async function signedIn(test: TestApp, id: string) {
  currentUser.set(test, { id });
  const pusher = pusherClient(stack, edge.port, test);
  clients.push(pusher);
  const got: Array<{ event: string; data: unknown }> = [];
  for (const event of ['herald:event', 'order.shipped']) {
    pusher.user.bind(event, (data) => got.push({ event, data }));
  }
  await connected(pusher);
  pusher.signin();
  return { pusher, got };
}

/** A raw client signed in as `id` (the pusher library's signature), waiting for signin_success. */
async function rawSignedIn(
  test: TestApp,
  id: string,
  answerPings = true,
  device?: string,
): Promise<RawPusher> {
  const raw = rawPusher(stack, edge.port, test.app.key, { answerPings });
  const user = device === undefined ? { id } : { id, device };
  const { auth, user_data } = test.server.authenticateUser(await raw.socketId(), user);
  raw.send('pusher:signin', { auth, user_data });
  await waitUntil('signin_success', () =>
    raw.frames.some((f) => f.event === 'pusher:signin_success'),
  );
  return raw;
}

describe('Pusher sockets as members of their user recipient', () => {
  it('delivers a live event to the signed-in user, framed with its herald id', async () => {
    const test = apps.make();
    const { got } = await signedIn(test, '7');
    const recipient = pusherRecipient(test.app.app_id, '7', 'any') as string;
    const { reply } = await liveOnceMember(stack, recipient, '{"hello":"pusher"}');
    expect(await reply).toEqual({ v: 1, sockets: 1 });
    await waitUntil('the user event', () => got.length === 1);
    expect(got[0]).toEqual({
      event: 'herald:event',
      data: { herald_id: expect.any(String), hello: 'pusher' },
    });
  });

  it('answers the live event sent only once the client answered the pusher:ping after it', async () => {
    const test = apps.make();
    const raw = await rawSignedIn(test, '8', false);
    const recipient = pusherRecipient(test.app.app_id, '8', 'any') as string;
    let settled = false;
    const { reply } = await liveOnceMember(
      stack,
      recipient,
      JSON.stringify({ event: 'order.shipped', data: '{"order":1}' }),
    );
    void reply.finally(() => {
      settled = true;
    });
    await waitUntil('the frame, then the proof ping', () => {
      const i = raw.frames.findIndex((f) => f.event === 'order.shipped');
      return i >= 0 && raw.frames.slice(i).some((f) => f.event === 'pusher:ping');
    });
    const frame = raw.frames.find((f) => f.event === 'order.shipped');
    expect(frame?.channel).toBe('#server-to-user-8');
    expect(JSON.parse(frame?.data as string)).toMatchObject({ order: 1 });
    expect(settled).toBe(false);
    raw.answerPings();
    expect(await reply).toEqual({ v: 1, sockets: 1 });
    raw.ws.close();
  });

  it('delivers an event queued while offline after sign-in, and acks it on the pong', async () => {
    const test = apps.make();
    const recipient = pusherRecipient(test.app.app_id, '9', 'any') as string;
    const id = randomUUID();
    const seq = await queueEvent(stack, ACCOUNT_A, recipient, '{"queued":true}', id);
    const { got } = await signedIn(test, '9');
    await waitUntil('the queued event', () => got.length === 1, 20_000);
    expect(got[0]?.data).toEqual({ herald_id: id, queued: true });
    await waitUntil(
      'the ack',
      async () => {
        const info = await consumerInfo(stack, ACCOUNT_A, recipient);
        return info === undefined || info.ack_floor.stream_seq >= seq;
      },
      20_000,
    );
  });

  it('redelivers a queued event a client never proved (no pong), with the same herald id', async () => {
    const test = apps.make();
    const recipient = pusherRecipient(test.app.app_id, '10', 'any') as string;
    const id = randomUUID();
    await queueEvent(stack, ACCOUNT_A, recipient, '{"again":1}', id);
    const silent = await rawSignedIn(test, '10', false);
    await waitUntil('the unproven copy', () =>
      silent.frames.some((f) => f.event === 'herald:event'),
    );
    silent.ws.close();
    await silent.closed;
    const { got } = await signedIn(test, '10');
    await waitUntil('the copy again', () => got.length >= 1, 20_000);
    expect(got[0]?.data).toEqual({ herald_id: id, again: 1 });
  });

  it("feeds a socket that subscribed its user's channel (Laravel Echo's way, no sign-in)", async () => {
    const test = apps.make();
    const raw = rawPusher(stack, edge.port, test.app.key);
    const channel = 'private-App.Models.User.11';
    const { auth } = test.server.authorizeChannel(await raw.socketId(), channel);
    raw.send('pusher:subscribe', { channel, auth });
    const recipient = pusherRecipient(test.app.app_id, '11', 'any') as string;
    const { reply } = await liveOnceMember(stack, recipient, '{"n":11}');
    expect(await reply).toEqual({ v: 1, sockets: 1 });
    const frame = raw.frames.find((f) => f.event === 'herald:event');
    expect(frame?.channel).toBe(channel);
    raw.ws.close();
  });

  it('is one member of its user when it signs in and subscribes the user channel too', async () => {
    const test = apps.make();
    const raw = await rawSignedIn(test, '16');
    const channel = 'private-App.Models.User.16';
    raw.send('pusher:subscribe', {
      channel,
      auth: test.server.authorizeChannel(await raw.socketId(), channel).auth,
    });
    await waitUntil('subscribed', () =>
      raw.frames.some((f) => f.event === 'pusher_internal:subscription_succeeded'),
    );
    const recipient = pusherRecipient(test.app.app_id, '16', 'any') as string;
    const { reply } = await liveOnceMember(stack, recipient, '{"once":1}');
    expect(await reply).toEqual({ v: 1, sockets: 1 });
    const events = raw.frames.filter((f) => f.event === 'herald:event');
    expect(events.map((f) => f.channel)).toEqual(['#server-to-user-16']);
    raw.ws.close();
  });

  it('catches each signed-in device up on what that device has not proven (user_data.device)', async () => {
    const test = apps.make();
    const recipient = pusherRecipient(test.app.app_id, '15', 'any') as string;
    const id = randomUUID();
    await queueEvent(stack, ACCOUNT_A, recipient, '{"d":1}', id);
    const ids = (raw: RawPusher) =>
      raw.frames
        .filter((f) => f.event === 'herald:event')
        .map((f) => (JSON.parse(f.data as string) as { herald_id: string }).herald_id);
    const phone = await rawSignedIn(test, '15', true, 'phone');
    await waitUntil('the phone got it', () => ids(phone).includes(id), 20_000);
    phone.ws.close();
    await phone.closed;
    const laptop = await rawSignedIn(test, '15', true, 'laptop');
    await waitUntil('the laptop got it too', () => ids(laptop).includes(id), 20_000);
    laptop.ws.close();
    await laptop.closed;
    // The phone proved it: back again, it gets what came since, and not that one.
    const again = await rawSignedIn(test, '15', true, 'phone');
    const sentinel = randomUUID();
    await queueEvent(stack, ACCOUNT_A, recipient, '{"d":2}', sentinel);
    await waitUntil('the sentinel', () => ids(again).includes(sentinel), 20_000);
    expect(ids(again)).toEqual([sentinel]);
    again.ws.close();
  });

  it('closes with 4001 when the app is deleted while open', async () => {
    const test = apps.make();
    const raw = await rawSignedIn(test, '17');
    apps.remove(test);
    await stack.auth.invalidate({ v: 1, key_id: test.key.id, reason: 'pusher_app' });
    expect((await raw.closed).code).toBe(4001);
  });

  it('closes the user sockets of the app with 4009 on terminate_connections', async () => {
    const test = apps.make();
    const raw = await rawSignedIn(test, '12');
    const recipient = pusherRecipient(test.app.app_id, '12', 'any') as string;
    const { reply } = await liveOnceMember(stack, recipient, '{}');
    await reply;
    stack.nc.publish(
      pusherSubjects.terminate(ACCOUNT_A, recipient),
      json.encode({ v: 1, app_id: test.app.app_id }),
    );
    expect((await raw.closed).code).toBe(4009);
    expect(raw.frames.at(-1)).toMatchObject({ event: 'pusher:error', data: { code: 4009 } });
  });

  it('refuses a non-UUID user of a uuid app with 4009, and takes a UUID one', async () => {
    const test = apps.make({ user_ids: 'uuid' });
    const raw = rawPusher(stack, edge.port, test.app.key);
    const { auth, user_data } = test.server.authenticateUser(await raw.socketId(), { id: '13' });
    raw.send('pusher:signin', { auth, user_data });
    expect((await raw.closed).code).toBe(4009);
    const user = randomUUID();
    const ok = await rawSignedIn(test, user);
    const { reply } = await liveOnceMember(stack, user, '{"to":"uuid"}');
    expect(await reply).toEqual({ v: 1, sockets: 1 });
    ok.ws.close();
  });

  it('closes with 4003 when auth revokes the bound key', async () => {
    const test = apps.make();
    const raw = await rawSignedIn(test, '14');
    apps.refuse(test, 'key_revoked');
    await stack.auth.invalidate({ v: 1, key_id: test.key.id, reason: 'revoked' });
    expect((await raw.closed).code).toBe(4003);
  });
});

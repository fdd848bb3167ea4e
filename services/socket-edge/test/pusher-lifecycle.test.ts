import { describe, expect, it } from 'vitest';
import { type RunningEdge, type Stack, startEdge, waitUntil } from './fixture.js';
import { type PusherApps, rawPusher, usePusherDoor } from './pusher-fixture.js';

let stack: Stack;
let edge: RunningEdge;
let apps: PusherApps;

usePusherDoor(
  (d) => {
    ({ stack, edge, apps } = d);
  },
  {
    env: {
      PUSHER_SIGNIN_TIMEOUT_MS: '3000',
      PUSHER_MAX_CHANNELS_PER_SOCKET: '2',
    },
  },
);

describe('Pusher sockets over their life', () => {
  it('closes a socket of a token key that does not sign in within PUSHER_SIGNIN_TIMEOUT_MS with 4009', async () => {
    const test = apps.make({}, { require_token: true });
    const idle = rawPusher(stack, edge.port, test.app.key);
    const member = rawPusher(stack, edge.port, test.app.key);
    const { auth, user_data } = test.server.authenticateUser(await member.socketId(), { id: 'u1' });
    member.send('pusher:signin', { auth, user_data });
    const closed = await idle.closed;
    expect(closed.code).toBe(4009);
    expect(idle.frames.at(-1)).toMatchObject({ event: 'pusher:error', data: { code: 4009 } });
    // The signed-in one was given the same time and stays.
    expect(member.frames.some((f) => f.event === 'pusher:signin_success')).toBe(true);
    expect(member.ws.readyState).toBe(member.ws.OPEN);
    member.ws.close();
  });

  it('refuses a subscribe past PUSHER_MAX_CHANNELS_PER_SOCKET, and takes one again after an unsubscribe', async () => {
    const raw = rawPusher(stack, edge.port, apps.make().app.key);
    await raw.socketId();
    for (const channel of ['a', 'b', 'c']) raw.send('pusher:subscribe', { channel });
    const answers = () => raw.frames.filter((f) => f.event.includes('subscription_'));
    await waitUntil('three answers', () => answers().length === 3);
    // A success waits for the edge's NATS subscription to be flushed, a refusal does not: the
    // answers come per channel, in no promised order.
    const byChannel = () =>
      [...answers()].sort((x, y) => String(x.channel).localeCompare(String(y.channel)));
    expect(byChannel().map((f) => [f.event, f.channel])).toEqual([
      ['pusher_internal:subscription_succeeded', 'a'],
      ['pusher_internal:subscription_succeeded', 'b'],
      ['pusher:subscription_error', 'c'],
    ]);
    expect(byChannel()[2]?.data).toMatchObject({ type: 'LimitReached' });
    raw.send('pusher:unsubscribe', { channel: 'a' });
    raw.send('pusher:subscribe', { channel: 'c' });
    await waitUntil('the fourth answer', () => answers().length === 4);
    expect(answers()[3]).toMatchObject({
      event: 'pusher_internal:subscription_succeeded',
      channel: 'c',
    });
    raw.ws.close();
  });

  it('answers a client pusher:ping with pusher:pong', async () => {
    const raw = rawPusher(stack, edge.port, apps.make().app.key);
    await raw.socketId();
    raw.send('pusher:ping', {});
    await waitUntil('the pong', () => raw.frames.some((f) => f.event === 'pusher:pong'));
    raw.ws.close();
  });

  it('closes with 4100 past MAX_SOCKETS, which Pusher and /ws/connect sockets share', async () => {
    const small = await startEdge(stack, { MAX_SOCKETS: '1' });
    try {
      const test = apps.make();
      const first = rawPusher(stack, small.port, test.app.key);
      await first.socketId();
      const second = rawPusher(stack, small.port, test.app.key);
      expect((await second.closed).code).toBe(4100);
      expect(second.frames[0]).toMatchObject({ event: 'pusher:error', data: { code: 4100 } });
      first.ws.close();
      await first.closed;
    } finally {
      await small.close();
    }
  });

  it('closes every Pusher socket with 4200 when the edge shuts down, a member one included', async () => {
    const test = apps.make();
    const plain = rawPusher(stack, edge.port, test.app.key);
    const member = rawPusher(stack, edge.port, test.app.key);
    await plain.socketId();
    const { auth, user_data } = test.server.authenticateUser(await member.socketId(), { id: 'u2' });
    member.send('pusher:signin', { auth, user_data });
    await waitUntil('signin_success', () =>
      member.frames.some((f) => f.event === 'pusher:signin_success'),
    );
    await edge.close();
    expect((await plain.closed).code).toBe(4200);
    expect((await member.closed).code).toBe(4200);
  });
});

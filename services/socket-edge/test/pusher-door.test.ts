import { pusherSubjects } from '@herald/proto';
import { JSONCodec } from 'nats';
import { describe, expect, it } from 'vitest';
import { ACCOUNT_B, metric, type RunningEdge, type Stack, waitUntil } from './fixture.js';
import {
  connected,
  type Pusher,
  type PusherApps,
  pusherClient,
  rawPusher,
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
  { clients },
);

function client(test: ReturnType<PusherApps['make']>, opts: { origin?: string } = {}): Pusher {
  const pusher = pusherClient(stack, edge.port, test, opts);
  clients.push(pusher);
  return pusher;
}

/** Waits for a pusher-js channel's subscription outcome. */
function outcome(pusher: Pusher, channel: string): Promise<{ ok: boolean; data: unknown }> {
  return new Promise((resolve) => {
    const ch = pusher.subscribe(channel);
    ch.bind('pusher:subscription_succeeded', (data) => resolve({ ok: true, data }));
    ch.bind('pusher:subscription_error', (data) => resolve({ ok: false, data }));
  });
}

describe('the Pusher door, /app/{key}, with the stock pusher-js', () => {
  it('establishes the connection with a Pusher socket id and counts it', async () => {
    const pusher = client(apps.make());
    const socketId = await connected(pusher);
    expect(socketId).toMatch(/^\d+\.\d+$/);
    expect(
      metric(await edge.metrics(), 'herald_open_sockets{framing="pusher",service="socket-edge"}'),
    ).toBeGreaterThan(0);
  });

  it('subscribes public and private channels, and refuses a tampered signature', async () => {
    const test = apps.make();
    const pusher = client(test);
    await connected(pusher);
    expect((await outcome(pusher, 'news')).ok).toBe(true);
    expect((await outcome(pusher, 'private-orders')).ok).toBe(true);
    const tampered = pusherClient(stack, edge.port, {
      ...test,
      server: apps.make().server, // signs with another app's secret
    });
    clients.push(tampered);
    await connected(tampered);
    const refused = await outcome(tampered, 'private-orders');
    expect(refused.ok).toBe(false);
    expect(refused.data).toMatchObject({ type: 'AuthError', status: 401 });
  });

  it('fans a channel message out to its subscribers, except the socket it names', async () => {
    const test = apps.make();
    const [a, b] = [client(test), client(test)];
    const [idA] = await Promise.all([connected(a), connected(b)]);
    const got: Array<{ who: string; data: unknown }> = [];
    for (const [who, pusher] of [
      ['a', a],
      ['b', b],
    ] as const) {
      const ch = pusher.subscribe('scores');
      ch.bind('goal', (data) => got.push({ who, data }));
      await new Promise<void>((r) => ch.bind('pusher:subscription_succeeded', () => r()));
    }
    const subject = pusherSubjects.channel(test.app.account_id, test.app.app_id, 'scores');
    stack.nc.publish(
      subject,
      json.encode({ v: 1, event: 'goal', channel: 'scores', data: '{"n":1}', socket_id: idA }),
    );
    stack.nc.publish(
      subject,
      json.encode({ v: 1, event: 'goal', channel: 'scores', data: '{"n":2}' }),
    );
    await waitUntil('both messages', () => got.filter((g) => g.who === 'b').length === 2);
    expect(got.filter((g) => g.who === 'b').map((g) => g.data)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(got.filter((g) => g.who === 'a').map((g) => g.data)).toEqual([{ n: 2 }]);
  });

  it('refuses presence channels (not supported yet) and bad channel names, and ignores client events', async () => {
    const raw = rawPusher(stack, edge.port, apps.make().app.key);
    await raw.socketId();
    raw.send('pusher:subscribe', { channel: 'presence-room' });
    raw.send('pusher:subscribe', { channel: 'bad channel!' });
    raw.send('pusher:subscribe', { channel: `a${'b'.repeat(164)}` });
    raw.ws.send(JSON.stringify({ event: 'client-typing', channel: 'news', data: {} }));
    raw.send('pusher:ping', {});
    await waitUntil('the pong after them', () => raw.frames.some((f) => f.event === 'pusher:pong'));
    const errors = raw.frames.filter((f) => f.event === 'pusher:subscription_error');
    expect(errors.map((f) => (f.data as { type: string }).type)).toEqual([
      'UnsupportedChannel',
      'InvalidChannel',
      'InvalidChannel',
    ]);
    expect(raw.ws.readyState).toBe(raw.ws.OPEN);
    raw.ws.close();
  });

  it("refuses #server-to-user- of another user, and allows the signed-in user's own", async () => {
    // pusher-js itself refuses to subscribe a # channel: a raw client asks the edge.
    const test = apps.make();
    const raw = rawPusher(stack, edge.port, test.app.key);
    const socketId = await raw.socketId();
    const { auth, user_data } = test.server.authenticateUser(socketId, { id: '41' });
    raw.send('pusher:signin', { auth, user_data });
    raw.send('pusher:subscribe', { channel: '#server-to-user-41' });
    raw.send('pusher:subscribe', { channel: '#server-to-user-42' });
    await waitUntil(
      'both answers',
      () => raw.frames.filter((f) => f.event.includes('subscription_')).length === 2,
    );
    const answers = raw.frames.filter((f) => f.event.includes('subscription_'));
    expect(answers.map((f) => [f.event, f.channel])).toEqual([
      ['pusher_internal:subscription_succeeded', '#server-to-user-41'],
      ['pusher:subscription_error', '#server-to-user-42'],
    ]);
    raw.ws.close();
  });
});

describe('Pusher refusals: pusher:error, then the close code pusher-js acts on', () => {
  it('4001 for an unknown app key', async () => {
    const raw = rawPusher(stack, edge.port, '0123456789abcdef0123');
    expect((await raw.closed).code).toBe(4001);
    expect(raw.frames).toEqual([
      { event: 'pusher:error', data: { code: 4001, message: expect.any(String) } },
    ]);
  });

  it('4008 without protocol, 4007 for another version', async () => {
    const test = apps.make();
    const none = rawPusher(stack, edge.port, test.app.key, { query: 'client=js' });
    const six = rawPusher(stack, edge.port, test.app.key, { query: 'protocol=6' });
    expect((await none.closed).code).toBe(4008);
    expect((await six.closed).code).toBe(4007);
  });

  it('4003 when the bound key is refused, 4009 for a web key from another Origin', async () => {
    const revoked = apps.make();
    apps.refuse(revoked, 'key_revoked');
    expect((await rawPusher(stack, edge.port, revoked.app.key).closed).code).toBe(4003);
    const web = apps.make({}, { client: 'web', domain: 'https://app.example.com' });
    const elsewhere = rawPusher(stack, edge.port, web.app.key, { origin: 'https://evil.example' });
    expect((await elsewhere.closed).code).toBe(4009);
    const home = rawPusher(stack, edge.port, web.app.key, { origin: 'https://app.example.com' });
    expect(await home.socketId()).toMatch(/^\d+\.\d+$/);
    home.ws.close();
  });

  it('4009 for a key of dispatch scope, which may not receive', async () => {
    const dispatchOnly = apps.make({}, { scope: 'dispatch' });
    const raw = rawPusher(stack, edge.port, dispatchOnly.app.key);
    expect((await raw.closed).code).toBe(4009);
  });

  it('4004 over the plan connection cap, counted with every socket of the account', async () => {
    // The cap is the account's: other tests' sockets of account A count too, so use account B.
    const capped = apps.make(
      { account_id: ACCOUNT_B },
      {
        account_id: ACCOUNT_B,
        limits: { connections: 1, dispatch_rate: 10, dispatch_burst: 10, queue_per_recipient: 10 },
      },
    );
    const first = rawPusher(stack, edge.port, capped.app.key);
    await first.socketId();
    const second = rawPusher(stack, edge.port, capped.app.key);
    expect((await second.closed).code).toBe(4004);
    expect(second.frames[0]).toMatchObject({ event: 'pusher:error', data: { code: 4004 } });
    first.ws.close();
    await first.closed;
    // Its slot is given back once it closed.
    await waitUntil(
      'a slot again',
      async () => {
        const again = rawPusher(stack, edge.port, capped.app.key);
        const settled = await Promise.race([
          again.socketId().then(() => 'open'),
          again.closed.then(() => 'closed'),
        ]);
        again.ws.close();
        return settled === 'open';
      },
      20_000,
    );
  });
});

import { randomUUID } from 'node:crypto';
import { NatsRequester } from '@herald/nats';
import { subjects } from '@herald/proto';
import { type NatsServer, startNatsServer } from '@herald/testkit';
import { connect, headers, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushLive } from '../src/live-push.js';

const ACCOUNT = '0b6a5d3e-7c41-4f2a-9d0e-1a2b3c4d5e6f';
let server: NatsServer;
let nc: NatsConnection;
let edge: NatsConnection;

beforeAll(async () => {
  server = await startNatsServer();
  [nc, edge] = await Promise.all([
    connect(server.connectOptions()),
    connect(server.connectOptions()),
  ]);
});
afterAll(async () => {
  await Promise.all([nc?.close(), edge?.close()]);
  await server?.stop();
});

const event = (recipient: string) => ({
  account: ACCOUNT,
  recipient,
  payload: new TextEncoder().encode('{"hello":1}'),
  headers: headers(),
});

/** A stand-in edge on the recipient's live subject answering with `reply` after `delayMs`. */
function answer(recipient: string, reply: string, delayMs = 0) {
  return edge.subscribe(subjects.live(ACCOUNT, recipient), {
    callback: (_err, msg) => {
      setTimeout(() => msg.respond(new TextEncoder().encode(reply)), delayMs);
    },
  });
}

describe('pushLive over NatsRequester (real nats-server)', () => {
  const pusher = (conn: NatsConnection = nc) => {
    const requester = new NatsRequester(conn);
    return { push: (e: ReturnType<typeof event>, ms: number) => pushLive(requester, e, ms) };
  };

  it("reports offline when nobody subscribes (the server's no-responders status)", async () => {
    expect(await pusher().push(event(randomUUID()), 2000)).toEqual({ kind: 'offline' });
  });

  it("reports sent with the edge's socket count, and the first of two answers wins", async () => {
    const recipient = randomUUID();
    const fast = answer(recipient, '{"v":1,"sockets":2}');
    const slow = answer(recipient, '{"v":1,"sockets":5}', 100);
    await edge.flush();
    const p = pusher();
    expect(await p.push(event(recipient), 2000)).toEqual({ kind: 'sent', sockets: 2 });
    // The late answer arrives after the request settled and is ignored; the next push is unaffected.
    await new Promise((r) => setTimeout(r, 150));
    expect(await p.push(event(recipient), 2000)).toEqual({ kind: 'sent', sockets: 2 });
    fast.unsubscribe();
    slow.unsubscribe();
  });

  it('reports offline when the edge holding the recipient answers 0 (no socket can prove it)', async () => {
    const recipient = randomUUID();
    const sub = answer(recipient, '{"v":1,"sockets":0}');
    await edge.flush();
    expect(await pusher().push(event(recipient), 2000)).toEqual({ kind: 'offline' });
    sub.unsubscribe();
  });

  it('reports timeout when the edge answers after the deadline, and error on a malformed answer', async () => {
    const late = randomUUID();
    const lateSub = answer(late, '{"v":1,"sockets":1}', 300);
    const garbled = randomUUID();
    const garbledSub = answer(garbled, 'not json');
    await edge.flush();
    const p = pusher();
    const [timedOut, malformed] = await Promise.all([
      p.push(event(late), 100),
      p.push(event(garbled), 2000),
    ]);
    expect(timedOut).toEqual({ kind: 'timeout' });
    expect(malformed).toEqual({ kind: 'error', reason: 'malformed live reply' });
    lateSub.unsubscribe();
    garbledSub.unsubscribe();
  });

  it('reports error, not a throw, once the connection is closed', async () => {
    const own = await connect(server.connectOptions());
    const p = pusher(own);
    await own.close();
    const outcome = await p.push(event(randomUUID()), 500);
    expect(outcome.kind).toBe('error');
  });
});

import type { AddressInfo } from 'node:net';
import { Herald } from '@herald/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import { eventually } from '../stack/context.js';

interface Queued {
  id: string;
  ts: number;
  payload: unknown;
}

/**
 * A minimal herald.v1 edge on a real `ws` server (loopback, no TLS): it keeps a queue, sends all of
 * it in one `events` frame when a batch=1 socket connects, and drops from the queue what a list
 * ack names, as the contract (proto/src/socket.ts) says. It records what every socket received
 * from the SDK, so the test reads the SDK's frames as they crossed a real socket.
 */
function miniEdge() {
  const server = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    handleProtocols: (protocols) => (protocols.has('herald.v1') ? 'herald.v1' : false),
  });
  const queue: Queued[] = [];
  const sockets: Array<{ ws: WebSocket; query: URLSearchParams; got: string[] }> = [];
  /** When true, acks are recorded but not applied (the edge "lost" them), as after a crash. */
  let ignoreAcks = false;
  server.on('connection', (ws, req) => {
    const s = { ws, query: new URL(req.url ?? '', 'ws://x').searchParams, got: [] as string[] };
    sockets.push(s);
    ws.on('message', (data) => {
      const text = data.toString();
      s.got.push(text);
      const f = JSON.parse(text);
      if (f.type !== 'ack' || ignoreAcks) return;
      const acked = new Set<string>(f.ids ?? [f.id]);
      for (let i = queue.length - 1; i >= 0; i--) {
        if (acked.has(queue[i]?.id ?? '')) queue.splice(i, 1);
      }
    });
    if (s.query.get('batch') === '1' && queue.length > 0)
      ws.send(JSON.stringify({ type: 'events', events: queue }));
  });
  return {
    server,
    queue,
    sockets,
    set ignoreAcks(v: boolean) {
      ignoreAcks = v;
    },
    url: () => `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('@herald/sdk (built) over a real socket: events frames and list acks', () => {
  let edge: ReturnType<typeof miniEdge>;
  const heralds: Herald[] = [];
  beforeEach(async () => {
    edge = miniEdge();
    await new Promise((r) => edge.server.once('listening', r));
  });
  afterEach(async () => {
    for (const h of heralds.splice(0)) h.disconnect();
    for (const s of edge.sockets) s.ws.terminate();
    await edge.close();
  });
  const herald = () => {
    const h = new Herald({
      apiKey: 'hk_test_wire-test-secret-key-0123456789',
      client: 'mobile',
      wsUrl: edge.url(),
      baseUrl: edge.url().replace('ws:', 'http:'),
      backoff: { baseMs: 20, capMs: 100 },
    });
    heralds.push(h);
    return h;
  };
  const recipient = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';

  it('asks for batch=1 on herald.v1, hands queued events over in order, answers the frame with one list ack, and keeps {id} acks for single events', async () => {
    edge.queue.push(
      { id: 'q1', ts: 1, payload: { n: 1 } },
      { id: 'q2', ts: 2, payload: 'two' },
      { id: 'q3', ts: 3, payload: [3] },
    );
    const seen: Array<[unknown, string]> = [];
    herald()
      .subscribe(recipient)
      .listen((p, e) => seen.push([p, e.id]));
    await eventually(() => edge.queue.length === 0, 'the list ack to empty the queue');
    const [s] = edge.sockets;
    expect(s?.ws.protocol).toBe('herald.v1');
    expect(s?.query.get('batch')).toBe('1');
    expect(seen).toEqual([
      [{ n: 1 }, 'q1'],
      ['two', 'q2'],
      [[3], 'q3'],
    ]);
    expect(s?.got).toEqual(['{"type":"ack","ids":["q1","q2","q3"]}']);
    s?.ws.send(JSON.stringify({ type: 'event', id: 'live', ts: 4, payload: 'now' }));
    await eventually(() => (s?.got.length ?? 0) === 2, 'the single ack');
    expect(s?.got[1]).toBe('{"type":"ack","id":"live"}');
    expect(seen.map(([, id]) => id)).toEqual(['q1', 'q2', 'q3', 'live']);
  });

  it('acks lost with the socket: the redelivered frame is acked again, but only its new event reaches the app', async () => {
    edge.queue.push({ id: 'a', ts: 1, payload: 'a' }, { id: 'b', ts: 2, payload: 'b' });
    edge.ignoreAcks = true;
    const seen: string[] = [];
    const h = herald();
    h.subscribe(recipient).listen((_p, e) => seen.push(e.id));
    await eventually(() => (edge.sockets[0]?.got.length ?? 0) === 1, 'the first list ack');
    expect(edge.sockets[0]?.got).toEqual(['{"type":"ack","ids":["a","b"]}']);
    // The edge lost that ack (it crashed before applying it): the queue still holds a and b, and
    // a new event queued meanwhile; the SDK reconnects and gets the three in one frame.
    edge.queue.push({ id: 'c', ts: 3, payload: 'c' });
    edge.ignoreAcks = false;
    edge.sockets[0]?.ws.terminate();
    await eventually(() => edge.queue.length === 0, 'the list ack of the redelivery');
    expect(edge.sockets).toHaveLength(2);
    expect(edge.sockets[1]?.got).toEqual(['{"type":"ack","ids":["a","b","c"]}']);
    expect(seen).toEqual(['a', 'b', 'c']);
  });
});

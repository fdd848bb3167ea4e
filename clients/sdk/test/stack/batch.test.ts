import { randomUUID } from 'node:crypto';
import { DispatchStatus, Herald } from '@herald/sdk';
import { type KeyObject, type Stack, startStack } from '@herald/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Runtime } from './context.js';
import { queueSettled } from './queue-state.js';
import { tlsRuntime } from './tls-runtime.js';

/**
 * The drain in batches through the built SDK against the real stack (nats-server, Postgres, auth,
 * ingress-api, socket-edge, status): events queued while the recipient had no socket reach the
 * SDK's batch=1 socket in `events` frames, each is handed to the app once and in order, each frame
 * is answered by one list ack, and the acks settle the queue: the events are `delivered` and a new
 * socket does not get them again.
 */
describe('@herald/sdk events frames and list acks against the real stack', () => {
  let stack: Stack;
  let key: KeyObject;
  let account: string;
  const runtimes: Runtime[] = [];
  const heralds: Herald[] = [];

  beforeAll(async () => {
    stack = await startStack({ services: ['auth', 'ingress-api', 'socket-edge', 'status'] });
    account = (await stack.createAccount()).id;
    key = await stack.createKey({ account, kind: 'test', client: 'mobile' });
  }, 120_000);
  afterEach(async () => {
    for (const h of heralds.splice(0)) h.disconnect();
    await Promise.all(runtimes.splice(0).map((rt) => rt.close()));
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const client = () => {
    const rt = tlsRuntime(stack.ca);
    runtimes.push(rt);
    const h = new Herald({
      apiKey: key.key,
      client: 'mobile',
      baseUrl: stack.baseUrl,
      wsUrl: stack.wsUrl,
      WebSocket: rt.WebSocket,
      fetch: rt.fetch,
      backoff: { baseMs: 50, capMs: 400 },
      // The recipient's shared queue, whose drain hands the edge many queued events per read. A
      // device's catch-up reads its events one by one, so the edge sends them one per frame.
      device: false,
    });
    heralds.push(h);
    return { h, rt };
  };

  /** Each id's status, from POST /events/status. */
  const statuses = async (rt: Runtime, ids: string[]): Promise<string[]> => {
    const res = await rt.fetch(`${stack.baseUrl}/events/status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: key.key, ids }),
    });
    if (res.status !== 200) return [];
    const body = (await res.json()) as { events: Array<{ status: string }> };
    return body.events.map((e) => e.status);
  };

  it('queued events arrive in events frames, once each and in order, are list-acked, delivered, and not redelivered on a new socket', async () => {
    const to = randomUUID();
    const { h: sender, rt } = client();
    const sent: string[] = [];
    for (let n = 0; n < 20; n++) {
      const r = await sender.notify({ recipient: to, payload: { n } });
      expect(r.status).toBe(DispatchStatus.queued);
      sent.push(r.id ?? '');
    }
    const seen: Array<[unknown, string]> = [];
    sender.subscribe(to).listen((p, e) => seen.push([p, e.id]));
    await eventually(() => seen.length === sent.length, 'the queued events');
    expect(seen).toEqual(sent.map((id, n) => [{ n }, id]));
    const [log] = rt.wire;
    // The edge sent them in events frames (the drain in batches), not one frame per event.
    const batches = (log?.frames ?? []).filter((f) => f.type === 'events');
    expect(batches.some((f) => (f.events ?? []).length > 1)).toBe(true);
    expect(rt.wireEventIds()).toEqual(sent);
    // Each events frame answered by exactly one list ack of its ids, in frame order.
    await eventually(
      () =>
        (log?.sent ?? []).filter((s) => JSON.parse(s).type === 'ack').length ===
        (log?.frames ?? []).filter((f) => f.type === 'event' || f.type === 'events').length,
      'an ack for every frame',
    );
    const acks = (log?.sent ?? []).map((s) => JSON.parse(s)).filter((f) => f.type === 'ack');
    const answers = (log?.frames ?? [])
      .filter((f) => f.type === 'event' || f.type === 'events')
      .map((f) =>
        f.type === 'event'
          ? { type: 'ack', id: f.id }
          : { type: 'ack', ids: (f.events ?? []).map((e) => e.id) },
      );
    expect(acks).toEqual(answers);
    // The acks reached the edge: the queue is settled and every event is delivered.
    await eventually(
      () => queueSettled(stack.nats.connectOptions(), account, to),
      'the edge to apply the list acks',
    );
    await eventually(
      async () => (await statuses(rt, sent)).every((s) => s === 'delivered'),
      'every event delivered',
    );
    // A new socket of the recipient gets a later event, and none of the acked ones again.
    sender.disconnect();
    const { h: again, rt: rt2 } = client();
    const later: string[] = [];
    again.subscribe(to).listen((_p, e) => later.push(e.id));
    await eventually(() => again.connected(), 'the new socket');
    const marker = await sender.notify({ recipient: to, payload: 'marker' });
    await eventually(() => later.includes(marker.id ?? ''), 'the marker');
    expect(later).toEqual([marker.id]);
    expect(rt2.wireEventIds()).toEqual([marker.id]);
  });
});

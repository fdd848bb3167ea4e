import { randomUUID } from 'node:crypto';
import { EventHeaders, subjects } from '@herald/proto';
import { queueStreamOf } from '@herald/queue';
import { headers } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT_A,
  consumerInfo,
  metric,
  openClient,
  queueEvent,
  queueMany as queueManyFor,
  type RunningEdge,
  type Stack,
  sendLive,
  sleep,
  startEdge,
  startStack,
  type TestClient,
  waitUntil,
} from './fixture.js';

let stack: Stack;
let edge: RunningEdge;

beforeAll(async () => {
  stack = await startStack();
  // A 30 s ack_wait (the default is 1 s): an event that came back within the 10 s waits below was
  // nakked by the edge, not redelivered by ack_wait.
  edge = await startEdge(stack, { ACK_WAIT_MS: '30000' });
});

afterAll(async () => {
  await edge?.close();
  await stack?.stop();
});

const queueMany = (recipient: string, count: number) =>
  queueManyFor(stack, ACCOUNT_A, recipient, count);

const ackFloor = async (recipient: string) =>
  (await consumerInfo(stack, ACCOUNT_A, recipient))?.ack_floor.stream_seq ?? -1;

describe('queued events, herald.v1', () => {
  it('drains 100 queued events in stream order, acking each in JetStream only after the client acked it', async () => {
    const recipient = randomUUID();
    const { ids, seqs } = await queueMany(recipient, 100);
    const firstSeq = seqs[0] ?? 0;
    const before = metric(
      await edge.metrics(),
      'herald_queued_deliveries_total{service="socket-edge"}',
    );
    const client = openClient(stack, edge.port, { recipient, v1: true, autoAck: false });
    await client.opened;
    await waitUntil('a first batch', () => client.events.length >= 8);
    let info = await consumerInfo(stack, ACCOUNT_A, recipient);
    expect(info?.ack_floor.stream_seq).toBe(firstSeq - 1);
    expect(info?.num_ack_pending).toBeGreaterThanOrEqual(8);
    expect(client.events.slice(0, 8).map((e) => e.id)).toEqual(ids.slice(0, 8));
    expect(client.events[0]?.payload).toEqual({ n: 0 });

    // An ack for an id the edge never sent is ignored.
    client.ack(randomUUID());
    for (const e of client.events.slice(0, 3)) client.ack(e.id);
    await waitUntil(
      'the floor to reach the third event',
      async () => (await ackFloor(recipient)) === seqs[2],
    );
    info = await consumerInfo(stack, ACCOUNT_A, recipient);
    expect(info?.num_ack_pending).toBeGreaterThan(0);

    client.ackAllFromNowOn();
    await waitUntil('all 100 events', () => client.events.length >= 100);
    expect(client.events.map((e) => e.id)).toEqual(ids);
    await waitUntil('every ack', async () => (await ackFloor(recipient)) === seqs[99]);
    info = await consumerInfo(stack, ACCOUNT_A, recipient);
    expect(info?.num_ack_pending).toBe(0);
    await waitUntil(
      'the counter',
      async () =>
        metric(await edge.metrics(), 'herald_queued_deliveries_total{service="socket-edge"}') ===
        before + 100,
    );
    client.ws.close();
  });

  it('sends what a closed socket left unacked again, with the same ids, on the next connect', async () => {
    const recipient = randomUUID();
    const { ids } = await queueMany(recipient, 20);
    const first = openClient(stack, edge.port, { recipient, v1: true, autoAck: false });
    await first.opened;
    await waitUntil('a first batch', () => first.events.length >= 8);
    for (const e of first.events.slice(0, 5)) first.ack(e.id);
    const seenUnacked = first.events.slice(5).map((e) => e.id);
    first.ws.close();
    await first.closed;

    const second = openClient(stack, edge.port, { recipient, v1: true });
    await second.opened;
    await waitUntil('the other 15', () => second.events.length >= 15);
    await sleep(50);
    const again = second.events.map((e) => e.id);
    expect(new Set(again)).toEqual(new Set(ids.slice(5)));
    expect(again.length).toBe(15);
    for (const id of seenUnacked) expect(again).toContain(id);
    second.ws.close();
  });

  it('writes a queued event to every socket of the recipient and acks it on the first client ack', async () => {
    const recipient = randomUUID();
    const tab1 = openClient(stack, edge.port, { recipient, v1: true, autoAck: false });
    const tab2 = openClient(stack, edge.port, { recipient, v1: true, autoAck: false });
    await Promise.all([tab1.opened, tab2.opened]);
    const id = randomUUID();
    const seq = await queueEvent(stack, ACCOUNT_A, recipient, '{"both":true}', id);
    await waitUntil('both tabs', () => tab1.events.length === 1 && tab2.events.length === 1);
    expect(tab1.events[0]?.id).toBe(id);
    expect(tab2.events[0]?.id).toBe(id);
    tab2.ack(id);
    await waitUntil('the ack', async () => (await ackFloor(recipient)) === seq);
    tab1.ack(id);
    tab1.ws.close();
    tab2.ws.close();
  });

  it('re-creates the consumer for an event queued after retention reaped it while connected', async () => {
    const recipient = randomUUID();
    await queueMany(recipient, 1);
    const client = openClient(stack, edge.port, { recipient, v1: true });
    await client.opened;
    await waitUntil('the first event', () => client.events.length === 1);
    await waitUntil(
      'its ack',
      async () => (await consumerInfo(stack, ACCOUNT_A, recipient))?.num_ack_pending === 0,
    );
    // What retention does: purge the acked messages, then delete the consumer.
    await stack.jsm.streams.purge(queueStreamOf(ACCOUNT_A, recipient), {
      filter: subjects.queue(ACCOUNT_A, recipient),
    });
    await stack.jsm.consumers.delete(
      queueStreamOf(ACCOUNT_A, recipient),
      `q_${ACCOUNT_A}_${recipient}`,
    );
    const id = randomUUID();
    await queueEvent(stack, ACCOUNT_A, recipient, '{"after":"reap"}', id);
    await waitUntil('the event queued after the reap', () => client.events.length === 2);
    expect(client.events[1]).toMatchObject({ id, payload: { after: 'reap' } });
    client.ws.close();
  });
});

describe('queued events, plain framing', () => {
  it('acks nothing a client received but did not prove (no pong), and sends it again on the next connect', async () => {
    const recipient = randomUUID();
    const { seqs } = await queueMany(recipient, 3);
    const mute = openClient(stack, edge.port, { recipient, autoPong: false });
    await mute.opened;
    await waitUntil('three frames', () => mute.frames.length === 3);
    const info = await consumerInfo(stack, ACCOUNT_A, recipient);
    // Below the first event: a new memory-state consumer reports its stream's first sequence minus
    // one, which is not 0 when this recipient shares its partition with one whose events a test
    // above purged (the reap test).
    expect(info?.ack_floor.stream_seq).toBeLessThan(seqs[0] ?? 0);
    expect(info?.num_ack_pending).toBe(3);
    mute.ws.close();
    await mute.closed;
    const client = openClient(stack, edge.port, { recipient });
    await waitUntil('three frames again', () => client.frames.length === 3);
    expect(client.frames).toEqual(['{"n":0}', '{"n":1}', '{"n":2}']);
    client.ws.close();
  });

  it('writes the payloads in order and acks each once the pong of a later ping proved it', async () => {
    const recipient = randomUUID();
    const { seqs } = await queueMany(recipient, 3);
    const client = openClient(stack, edge.port, { recipient });
    await client.opened;
    await waitUntil('three frames', () => client.frames.length === 3);
    expect(client.frames).toEqual(['{"n":0}', '{"n":1}', '{"n":2}']);
    await waitUntil('the acks', async () => (await ackFloor(recipient)) === seqs[2]);
    client.ws.close();
  });
});

describe('consumers exist only for recipients with something queued', () => {
  it('creates no consumer for a recipient who connects with nothing queued, until something is', async () => {
    const recipient = randomUUID();
    const client = openClient(stack, edge.port, { recipient, v1: true });
    await client.opened;
    // Past QUEUE_RECHECK_MS (500), so both connect-time checks ran.
    await sleep(800);
    expect(await consumerInfo(stack, ACCOUNT_A, recipient)).toBeUndefined();
    const names: string[] = [];
    for await (const c of await stack.jsm.consumers.list(queueStreamOf(ACCOUNT_A, recipient)))
      names.push(c.name);
    expect(names).not.toContain(`q_${ACCOUNT_A}_${recipient}`);

    // While connected, an event queued anyway (ingress timed out) is announced and drained.
    const id = randomUUID();
    await queueEvent(stack, ACCOUNT_A, recipient, '{"late":true}', id);
    await waitUntil('the queued event', () => client.events.length === 1);
    expect(client.events[0]?.id).toBe(id);
    expect(await consumerInfo(stack, ACCOUNT_A, recipient)).toBeDefined();
    client.ws.close();
  });
});

describe('the race between "no responders" and the connect', () => {
  it('re-checks the queue shortly after the connect, for an event whose notice never reached the edge', async () => {
    // A notice published through another cluster node can miss a subscription made an instant
    // before (interest propagates asynchronously); only the re-check finds such an event.
    const lateEdge = await startEdge(stack, { QUEUE_RECHECK_MS: '1000' });
    try {
      const recipient = randomUUID();
      const client = openClient(stack, lateEdge.port, { recipient, v1: true });
      await client.opened;
      await sendLive(stack.nc, ACCOUNT_A, recipient, '{"first":"live"}');
      const id = randomUUID();
      const h = headers();
      h.set(EventHeaders.id, id);
      h.set(EventHeaders.ts, String(Date.now()));
      await stack.js.publish(
        subjects.queue(ACCOUNT_A, recipient),
        new TextEncoder().encode('{"no":"notice"}'),
        { headers: h },
      );
      await waitUntil('the event found by the re-check', () => client.events.length === 2);
      expect(client.events[1]).toMatchObject({ id, payload: { no: 'notice' } });
      client.ws.close();
    } finally {
      await lateEdge.close();
    }
  });

  it('does not look the consumer up again at the re-check when the drain is already running', async () => {
    // File-state consumers: a memory consumer's floor record reads the consumer's info as well.
    const rechecking = await startEdge(stack, {
      QUEUE_RECHECK_MS: '300',
      QUEUE_CONSUMER_MEMORY: 'false',
    });
    const recipient = randomUUID();
    // This recipient's consumer only: other tests' sessions on the main edge may still read theirs.
    const infos: string[] = [];
    const watch = stack.nc.subscribe('$JS.API.CONSUMER.INFO.>', {
      callback: (_err, msg) => {
        if (msg.subject.includes(recipient)) infos.push(msg.subject);
      },
    });
    try {
      await queueMany(recipient, 3);
      await stack.nc.flush();
      const client = openClient(stack, rechecking.port, { recipient, v1: true });
      await client.opened;
      await waitUntil('the queued events', () => client.events.length === 3);
      // Past the re-check, with the run still consuming: the pull delivers anything stored since,
      // so the re-check costs the server nothing (it was a consumer info per connect).
      await sleep(700);
      await stack.nc.flush();
      expect(infos).toEqual([]);
      client.ws.close();
    } finally {
      watch.unsubscribe();
      await rechecking.close();
    }
  });

  /**
   * Plays ingress for one event: a live request, and on no responders (or no reply) a queue
   * publish plus notice. Returns how the event went.
   */
  async function dispatch(recipient: string, id: string): Promise<'live' | 'queued'> {
    try {
      await sendLive(stack.nc, ACCOUNT_A, recipient, `{"id":"${id}"}`, id, 1000);
      return 'live';
    } catch {
      await queueEvent(stack, ACCOUNT_A, recipient, `{"id":"${id}"}`, id);
      return 'queued';
    }
  }

  it('delivers every event exactly once when events are dispatched while the client connects', async () => {
    const ITERATIONS = 40;
    const EVENTS = 4;
    const routes = { live: 0, queued: 0 };
    const runs: Array<{ client: TestClient; ids: string[] }> = [];
    for (let batch = 0; batch < ITERATIONS / 10; batch++) {
      await Promise.all(
        Array.from({ length: 10 }, async (_, i) => {
          const recipient = randomUUID();
          const ids = Array.from({ length: EVENTS }, () => randomUUID());
          const client = openClient(stack, edge.port, { recipient, v1: true });
          runs.push({ client, ids });
          // Events leave at staggered moments across the connect (TLS, auth, subscribe, check):
          // before it, while the session subscribes and checks the queue, and after it. The last
          // one leaves after the open: on a loaded machine a connect outlasts the 75 ms stagger,
          // and every event went before it (all queued: "both paths" failed on live 0).
          await Promise.all(
            ids.map(async (id, n) => {
              if (n === EVENTS - 1) await client.opened;
              await sleep(((i * 7 + n * 13) % 16) * 5);
              routes[await dispatch(recipient, id)]++;
            }),
          );
          await client.opened;
          await waitUntil(`all ${EVENTS} events`, () => client.events.length >= EVENTS);
        }),
      );
    }
    // Give a duplicate (a redelivery, a second write) the chance to show up before counting.
    await sleep(200);
    for (const { client, ids } of runs) {
      expect(client.events.map((e) => e.id).sort()).toEqual([...ids].sort());
      client.ws.close();
    }
    // Both paths were exercised: some events went live, some through the queue.
    expect(routes.live).toBeGreaterThan(0);
    expect(routes.queued).toBeGreaterThan(0);
  });
});

describe('QUEUE_CHECK_CONCURRENCY', () => {
  it('at its lowest (1), still drains every recipient of a simultaneous reconnect, each in order', async () => {
    const narrow = await startEdge(stack, { QUEUE_CHECK_CONCURRENCY: '1' });
    try {
      const recipients = Array.from({ length: 40 }, () => randomUUID());
      for (const r of recipients) await queueMany(r, 3);
      const clients = recipients.map((recipient) =>
        openClient(stack, narrow.port, { recipient, v1: true }),
      );
      await Promise.all(clients.map((c) => c.opened));
      await waitUntil('every queued event on every socket', () =>
        clients.every((c) => c.events.length === 3),
      );
      for (const c of clients)
        expect(c.events.map((e) => e.payload)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
      expect(
        metric(await narrow.metrics(), 'herald_queue_checks_waiting{service="socket-edge"}'),
      ).toBe(0);
      for (const c of clients) c.ws.close();
    } finally {
      await narrow.close();
    }
  });
});

describe('queued events, QUEUE_CONSUMER_MEMORY', () => {
  it('creates the consumer with its state in memory and drains through it in order, acking after the client', async () => {
    const memory = await startEdge(stack, { QUEUE_CONSUMER_MEMORY: 'true' });
    try {
      const recipient = randomUUID();
      const { ids, seqs } = await queueMany(recipient, 30);
      const client = openClient(stack, memory.port, { recipient, v1: true, autoAck: false });
      await client.opened;
      await waitUntil('a first batch', () => client.events.length >= 8);
      const info = await consumerInfo(stack, ACCOUNT_A, recipient);
      expect(info?.config.mem_storage).toBe(true);
      // Nothing is acked in JetStream before the client's ack (a memory-state consumer reports
      // a floor of 0 until its first ack, a file-state one the sequence before its first event).
      expect(info?.ack_floor.stream_seq).toBeLessThan(seqs[0] ?? 0);
      expect(info?.num_ack_pending).toBeGreaterThanOrEqual(8);
      client.ackAllFromNowOn();
      await waitUntil('all 30 events', () => client.events.length >= 30);
      expect(client.events.map((e) => e.id)).toEqual(ids);
      await waitUntil('every ack', async () => (await ackFloor(recipient)) === seqs[29]);
      client.ws.close();
    } finally {
      await memory.close();
    }
  });
});

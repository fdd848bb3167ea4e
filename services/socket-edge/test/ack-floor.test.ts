import { randomUUID } from 'node:crypto';
import {
  QUEUE_FLOOR_BUCKET,
  QueueFloors,
  queueConsumerConfig,
  queueFloorKey,
  queueStreamOf,
} from '@herald/queue';
import type { ConsumerConfig } from 'nats';
import { describe, expect, it } from 'vitest';
import {
  ACCOUNT_A,
  consumerInfo,
  openClient,
  queueMany as queueManyFor,
  type RunningEdge,
  type Stack,
  sleep,
  startEdge,
  useEdgeStack,
  waitUntil,
} from './fixture.js';

/**
 * Consumers with their state in nats-server's memory (the default) and the floors the edge records
 * for them: a nats-server restart loses the consumers, and what was acked up to the recorded floor
 * must not come again, while nothing unacked may be lost. Real nats-server, restarted on its store.
 */
let stack: Stack;
let edge: RunningEdge;

useEdgeStack((started) => {
  ({ stack, edge } = started);
});

const queueMany = (recipient: string, count: number, from = 0) =>
  queueManyFor(stack, ACCOUNT_A, recipient, count, from);

/** The recorded floor, read straight from the bucket. */
async function recordedFloor(recipient: string): Promise<unknown> {
  const kv = await stack.js.views.kv(QUEUE_FLOOR_BUCKET, { bindOnly: true });
  const entry = await kv.get(queueFloorKey(ACCOUNT_A, recipient));
  return entry && entry.operation === 'PUT' ? JSON.parse(entry.string()) : undefined;
}

async function stored(recipient: string, seq: number): Promise<boolean> {
  return stack.jsm.streams
    .getMessage(queueStreamOf(ACCOUNT_A, recipient), { seq })
    .then(() => true)
    .catch(() => false);
}

/** Restarts nats-server on its store and waits until the edge's queue path answers again. */
async function restartNats(): Promise<void> {
  await stack.nats.restart();
  await waitUntil(
    'JetStream back',
    async () =>
      stack.jsm.streams
        .info(queueStreamOf(ACCOUNT_A, randomUUID()))
        .then(() => true)
        .catch(() => false),
    20_000,
  );
}

describe('recorded ack floors (QUEUE_CONSUMER_MEMORY, the default)', () => {
  it('after a nats-server restart, delivers only what was not acked before the drain caught up', async () => {
    const recipient = randomUUID();
    const first = await queueMany(recipient, 5);
    const client = openClient(stack, edge.port, { recipient, v1: true });
    await client.opened;
    await waitUntil('the five queued events', () => client.events.length === 5);
    expect((await consumerInfo(stack, ACCOUNT_A, recipient))?.config.mem_storage).toBe(true);
    await waitUntil(
      'the floor recorded',
      async () => (await recordedFloor(recipient)) !== undefined,
    );
    expect(await recordedFloor(recipient)).toEqual({
      v: 1,
      stream: queueStreamOf(ACCOUNT_A, recipient),
      seq: first.seqs[4],
      id: first.ids[4],
    });
    client.ws.close();
    await client.closed;
    const later = await queueMany(recipient, 3, 5);

    await restartNats();
    expect(await consumerInfo(stack, ACCOUNT_A, recipient)).toBeUndefined();
    const again = openClient(stack, edge.port, { recipient, v1: true });
    await again.opened;
    await waitUntil('the three events queued after the drain', () => again.events.length >= 3);
    await sleep(500);
    expect(again.events.map((e) => e.id)).toEqual(later.ids);
    // The new consumer was moved past the floor, not fed it: it delivered the three only, and its
    // ack floor covers everything (what retention deletes up to at its next run).
    const info = await consumerInfo(stack, ACCOUNT_A, recipient);
    expect(info?.delivered.consumer_seq).toBe(3);
    expect(info?.ack_floor.stream_seq).toBe(later.seqs[2]);
    // Nothing was deleted: acked events stay stored until retention, for the other devices.
    for (const seq of [...first.seqs, ...later.seqs])
      expect(await stored(recipient, seq)).toBe(true);
    again.ws.close();
  });

  it('records nothing for a drain that did not catch up: after a restart every event comes again', async () => {
    const recipient = randomUUID();
    const { ids } = await queueMany(recipient, 5);
    const client = openClient(stack, edge.port, { recipient, v1: true, autoAck: false });
    await client.opened;
    await waitUntil('the five queued events', () => client.events.length === 5);
    for (const e of client.events.slice(0, 2)) client.ack(e.id);
    await sleep(1500);
    expect(await recordedFloor(recipient)).toBeUndefined();
    client.ws.close();
    await client.closed;

    await restartNats();
    const again = openClient(stack, edge.port, { recipient, v1: true });
    await again.opened;
    await waitUntil('all five again', () => again.events.length >= 5);
    await sleep(300);
    // At least once: the two acks after the last record are not known any more; nothing is lost.
    expect(again.events.map((e) => e.id)).toEqual(ids);
    again.ws.close();
  });

  it('records a floor only at or below the one nats-server reports, which counts every session', async () => {
    const recipient = randomUUID();
    const stream = queueStreamOf(ACCOUNT_A, recipient);
    const { ids, seqs } = await queueMany(recipient, 3);
    // Another session holds the first event unacked: the consumer, made as an edge of an earlier
    // release made it (explicit acks; 30 s ack_wait, so it does not come back during the test),
    // pulled by the test itself. An AckAll consumer's case: ackall-floor.test.ts.
    const slow = await startEdge(stack, { ACK_WAIT_MS: '30000' });
    try {
      await stack.jsm.consumers.add(
        stream,
        queueConsumerConfig(ACCOUNT_A, recipient, {
          ackWaitMs: 30_000,
          maxAckPending: 64,
          memoryState: true,
          ackPolicy: 'explicit',
        }) as unknown as Partial<ConsumerConfig>,
      );
      const consumer = await stack.js.consumers.get(stream, `q_${ACCOUNT_A}_${recipient}`);
      const held = await consumer.next({ expires: 5000 });
      expect(held?.seq).toBe(seqs[0]);

      const client = openClient(stack, slow.port, { recipient, v1: true });
      await client.opened;
      await waitUntil('the two other events', () => client.events.length === 2);
      expect(client.events.map((e) => e.id)).toEqual(ids.slice(1));
      // The edge's drain caught up, but the server's floor is below the first event (a
      // memory-state consumer reports 0 or the sequence before its first event until then).
      await sleep(1800);
      const info = await consumerInfo(stack, ACCOUNT_A, recipient);
      expect(info?.num_ack_pending).toBe(1);
      expect(info?.ack_floor.stream_seq).toBeLessThan(seqs[0] as number);
      expect(await recordedFloor(recipient)).toBeUndefined();

      held?.ack();
      const next = await queueMany(recipient, 1, 3);
      await waitUntil('the fourth event', () => client.events.length === 3);
      // Once the held ack lands, the third event is a true floor too: the drain's last re-read for
      // it (6.25 s after it caught up) may record it first when the fourth comes late, as under
      // load. What counts is that the floor reaches the fourth once the server's does.
      await waitUntil(
        'the floor recorded at the fourth event',
        async () =>
          ((await recordedFloor(recipient)) as { seq: number } | undefined)?.seq === next.seqs[0],
        20_000,
      );
      expect(await recordedFloor(recipient)).toEqual({
        v: 1,
        stream,
        seq: next.seqs[0],
        id: next.ids[0],
      });
      client.ws.close();
    } finally {
      await slow.close();
    }
  });

  it('applies a recorded floor only when the event at its sequence is the recorded one', async () => {
    const floors = new QueueFloors(stack.nc, 5000);
    const connectAndCount = async (recipient: string, expected: number) => {
      const client = openClient(stack, edge.port, { recipient, v1: true });
      await client.opened;
      await waitUntil(`${expected} events`, () => client.events.length >= expected);
      await sleep(300);
      client.ws.close();
      return client.events.map((e) => e.id);
    };

    // Streams whose head was deleted (as everywhere retention ran): a new consumer there reports
    // the stream's first sequence minus one as delivered, not 0.
    const headless = async (recipient: string) => {
      const stream = queueStreamOf(ACCOUNT_A, recipient);
      let other = randomUUID();
      while (queueStreamOf(ACCOUNT_A, other) !== stream) other = randomUUID();
      await queueMany(other, 1);
      await stack.jsm.streams.purge(stream);
      expect((await stack.jsm.streams.info(stream)).state.first_seq).toBeGreaterThan(1);
    };
    // Each recipient gets 4 events and a floor recorded at its second one, spelled three ways.
    const cases = [
      // Another id at that sequence (the stream was made again since): nothing is skipped.
      { floor: (stream: string, _id: string) => ({ stream, id: randomUUID() }), left: 4 },
      // Another stream's floor (the queue's partitions changed): nothing is skipped.
      {
        floor: (_stream: string, id: string) => ({ stream: 'HERALD_QUEUE_ELSEWHERE', id }),
        left: 4,
      },
      // The recorded event itself: it and everything before it are skipped, the rest delivered.
      { floor: (stream: string, id: string) => ({ stream, id }), left: 2 },
    ];
    const recipients = cases.map(() => randomUUID());
    // All before any case queues, so no purge of a head touches another case's events.
    for (const recipient of recipients) await headless(recipient);
    const queued: { recipient: string; ids: string[]; seqs: number[] }[] = [];
    for (const [i, { floor, left }] of cases.entries()) {
      const recipient = recipients[i] as string;
      const { ids, seqs } = await queueMany(recipient, 4);
      queued.push({ recipient, ids, seqs });
      await floors.record(ACCOUNT_A, recipient, {
        v: 1,
        seq: seqs[1] as number,
        ...floor(queueStreamOf(ACCOUNT_A, recipient), ids[1] as string),
      });
      expect(await connectAndCount(recipient, left)).toEqual(ids.slice(4 - left));
    }
    // Skipped, not deleted: the events up to the floor stay stored until retention.
    for (const { recipient, seqs } of queued)
      for (const seq of seqs) expect(await stored(recipient, seq)).toBe(true);
  });
});

import { randomUUID } from 'node:crypto';
import { subjects } from '@herald/proto';
import {
  QUEUE_FLOOR_BUCKET,
  QueueFloors,
  queueConsumerConfig,
  queueFloorKey,
  queueStreamOf,
} from '@herald/queue';
import type { ConsumerConfig } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT_A,
  consumerInfo,
  openClient,
  queueEvent,
  type RunningEdge,
  type Stack,
  sleep,
  startEdge,
  startStack,
  waitUntil,
} from './fixture.js';

/**
 * Consumers with their state in nats-server's memory (the default) and the floors the edge records
 * for them: a nats-server restart loses the consumers, and what was acked up to the recorded floor
 * must not come again, while nothing unacked may be lost. Real nats-server, restarted on its store.
 */
let stack: Stack;
let edge: RunningEdge;

beforeAll(async () => {
  stack = await startStack();
  edge = await startEdge(stack);
});

afterAll(async () => {
  await edge?.close();
  await stack?.stop();
});

async function queueMany(recipient: string, count: number, from = 0) {
  const ids: string[] = [];
  const seqs: number[] = [];
  for (let n = from; n < from + count; n++) {
    const id = randomUUID();
    ids.push(id);
    seqs.push(await queueEvent(stack, ACCOUNT_A, recipient, `{"n":${n}}`, id));
  }
  return { ids, seqs };
}

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
    // The acked ones were deleted on the way (retention would have, at its next run).
    for (const seq of first.seqs) expect(await stored(recipient, seq)).toBe(false);
    for (const seq of later.seqs) expect(await stored(recipient, seq)).toBe(true);
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
    // Another session holds the first event unacked: the consumer, made as an edge makes it
    // (30 s ack_wait, so it does not come back during the test), pulled by the test itself.
    const slow = await startEdge(stack, { ACK_WAIT_MS: '30000' });
    try {
      await stack.jsm.consumers.add(
        stream,
        queueConsumerConfig(ACCOUNT_A, recipient, {
          ackWaitMs: 30_000,
          maxAckPending: 64,
          memoryState: true,
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
      await waitUntil(
        'the floor recorded',
        async () => (await recordedFloor(recipient)) !== undefined,
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
    const floors = new QueueFloors(stack.js, 5000);
    const connectAndCount = async (recipient: string, expected: number) => {
      const client = openClient(stack, edge.port, { recipient, v1: true });
      await client.opened;
      await waitUntil(`${expected} events`, () => client.events.length >= expected);
      await sleep(300);
      client.ws.close();
      return client.events.map((e) => e.id);
    };

    // Another id at that sequence (the stream was made again since): nothing is deleted.
    const other = randomUUID();
    const a = await queueMany(other, 4);
    await floors.record(ACCOUNT_A, other, {
      v: 1,
      stream: queueStreamOf(ACCOUNT_A, other),
      seq: a.seqs[1] as number,
      id: randomUUID(),
    });
    expect(await connectAndCount(other, 4)).toEqual(a.ids);

    // Another stream's floor (the queue's partitions changed): nothing is deleted.
    const moved = randomUUID();
    const b = await queueMany(moved, 4);
    await floors.record(ACCOUNT_A, moved, {
      v: 1,
      stream: 'HERALD_QUEUE_ELSEWHERE',
      seq: b.seqs[1] as number,
      id: b.ids[1] as string,
    });
    expect(await connectAndCount(moved, 4)).toEqual(b.ids);

    // The recorded event itself: it and everything before it are deleted, the rest delivered.
    const same = randomUUID();
    const c = await queueMany(same, 4);
    await floors.record(ACCOUNT_A, same, {
      v: 1,
      stream: queueStreamOf(ACCOUNT_A, same),
      seq: c.seqs[1] as number,
      id: c.ids[1] as string,
    });
    expect(await connectAndCount(same, 2)).toEqual(c.ids.slice(2));
    expect(await stored(same, c.seqs[0] as number)).toBe(false);
    expect(await stored(same, c.seqs[1] as number)).toBe(false);
    // Only the recipient's subject is touched.
    expect(await stored(other, a.seqs[0] as number)).toBe(true);
    expect(subjects.queue(ACCOUNT_A, same)).not.toBe(subjects.queue(ACCOUNT_A, other));
  });
});

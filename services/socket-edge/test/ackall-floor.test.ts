import { randomUUID } from 'node:crypto';
import {
  type QueueConsumerOptions,
  queueConsumerConfig,
  queueConsumerName,
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
  startEdge,
  type TestClient,
  useEdgeStack,
  waitUntil,
} from './fixture.js';

/**
 * AckAll recipient consumers (every one created since issue 42): the edge acks once per turn at
 * the contiguous proven floor, so no event is acked before a socket proved it, whatever order the
 * proofs come in and whoever else holds a delivery; a consumer made before keeps explicit acks.
 * Real nats-server and edge.
 */
let stack: Stack;
let edge: RunningEdge;

useEdgeStack((started) => {
  ({ stack, edge } = started);
});

const queueMany = (recipient: string, count: number, from = 0) =>
  queueManyFor(stack, ACCOUNT_A, recipient, count, from);

/** The recipient's consumer made as an earlier edge would (memory state, 64 pending), before any. */
async function addQueueConsumer(recipient: string, opts: QueueConsumerOptions): Promise<void> {
  await stack.jsm.consumers.add(
    queueStreamOf(ACCOUNT_A, recipient),
    queueConsumerConfig(ACCOUNT_A, recipient, {
      maxAckPending: 64,
      memoryState: true,
      ...opts,
    }) as unknown as Partial<ConsumerConfig>,
  );
}

/** Resolves once the edge answered a ping sent after everything the client sent before. */
function roundTrip(client: TestClient): Promise<void> {
  return new Promise((resolve) => {
    client.ws.once('pong', () => resolve());
    client.ws.ping();
  });
}

async function closeClient(client: TestClient): Promise<void> {
  client.ws.close();
  await client.closed;
}

describe('AckAll recipient consumers', () => {
  it('creates new consumers with ack policy all and acks them up to the last proven event', async () => {
    const recipient = randomUUID();
    const { ids, seqs } = await queueMany(recipient, 5);
    const client = openClient(stack, edge.port, { recipient, v1: true });
    await client.opened;
    await waitUntil('all five', () => client.events.length === 5);
    expect(client.events.map((e) => e.id)).toEqual(ids);
    await waitUntil('the floor at the fifth', async () => {
      const info = await consumerInfo(stack, ACCOUNT_A, recipient);
      return info?.num_ack_pending === 0 && info.ack_floor.stream_seq === seqs[4];
    });
    expect((await consumerInfo(stack, ACCOUNT_A, recipient))?.config.ack_policy).toBe('all');
    await closeClient(client);
  });

  it('never acks past an unproven event when two sockets prove out of order, and redelivers it after they close', async () => {
    const recipient = randomUUID();
    const a = openClient(stack, edge.port, { recipient, v1: true, autoAck: false });
    const b = openClient(stack, edge.port, { recipient, v1: true, autoAck: false });
    await Promise.all([a.opened, b.opened]);
    // Queued while both are connected (the notices kick the drain): each socket gets all three.
    const { ids, seqs } = await queueMany(recipient, 3);
    await waitUntil('three on each socket', () => a.events.length === 3 && b.events.length === 3);
    // The second socket proves the third event, the first the second: the first stays unproven.
    b.ack(ids[2] as string);
    a.ack(ids[1] as string);
    await Promise.all([roundTrip(a), roundTrip(b)]);
    await closeClient(a);
    await closeClient(b);

    // An ack at the proven floor would have covered the first event (AckAll), and it would not
    // come again; it does, with the two proven above it (nakked at the close, never acked).
    const c = openClient(stack, edge.port, { recipient, v1: true });
    await c.opened;
    await waitUntil('the three again', () => c.events.length >= 3);
    expect([...new Set(c.events.map((e) => e.id))].sort()).toEqual([...ids].sort());
    await waitUntil('everything acked', async () => {
      const info = await consumerInfo(stack, ACCOUNT_A, recipient);
      return info?.num_ack_pending === 0 && info.ack_floor.stream_seq === seqs[2];
    });
    await closeClient(c);
  });

  it('acks nothing past a delivery another session holds, until that one is settled', async () => {
    const recipient = randomUUID();
    const stream = queueStreamOf(ACCOUNT_A, recipient);
    const { ids, seqs } = await queueMany(recipient, 3);
    // Another session (the test) holds the first event: the consumer as an edge creates it.
    await addQueueConsumer(recipient, { ackWaitMs: 30_000 });
    const slow = await startEdge(stack, { ACK_WAIT_MS: '30000' });
    try {
      const consumer = await stack.js.consumers.get(
        stream,
        queueConsumerName(ACCOUNT_A, recipient),
      );
      const held = await consumer.next({ expires: 5000 });
      expect(held?.seq).toBe(seqs[0]);

      const client = openClient(stack, slow.port, { recipient, v1: true });
      await client.opened;
      await waitUntil('the two others', () => client.events.length === 2);
      expect(client.events.map((e) => e.id)).toEqual(ids.slice(1));
      await roundTrip(client);
      await slow.nc.flush();
      // Had the edge acked its proven floor (the third event), the first would be acked with it
      // and this nak ignored; it is redelivered, to the edge, and reaches the client.
      held?.nak();
      await waitUntil('the first, redelivered', () => client.events.length === 3);
      expect(client.events[2]?.id).toBe(ids[0]);
      await waitUntil('everything acked', async () => {
        const info = await consumerInfo(stack, ACCOUNT_A, recipient);
        return info?.num_ack_pending === 0 && info.ack_floor.stream_seq === seqs[2];
      });
      await closeClient(client);
    } finally {
      await slow.close();
    }
  });

  it('drains past max_ack_pending while two edges consume one recipient at once', async () => {
    const recipient = randomUUID();
    const { ids, seqs } = await queueMany(recipient, 200);
    const other = await startEdge(stack);
    try {
      const a = openClient(stack, edge.port, { recipient, v1: true });
      const b = openClient(stack, other.port, { recipient, v1: true });
      await Promise.all([a.opened, b.opened]);
      // Each edge is sure of none of its deliveries (the other one pulls too): it acks its own
      // proven run when the stored events from the consumer's floor up are its own.
      await waitUntil(
        'every event on one socket or the other',
        () => new Set([...a.events, ...b.events].map((e) => e.id)).size === 200,
        30_000,
      );
      expect([...new Set([...a.events, ...b.events].map((e) => e.id))].sort()).toEqual(
        [...ids].sort(),
      );
      await waitUntil('everything acked', async () => {
        const info = await consumerInfo(stack, ACCOUNT_A, recipient);
        return info?.num_ack_pending === 0 && info.ack_floor.stream_seq === seqs[199];
      });
      await closeClient(a);
      await closeClient(b);
    } finally {
      await other.close();
    }
  });

  it('drains a consumer made before with explicit acks, acking each event, and keeps its policy', async () => {
    const recipient = randomUUID();
    const { ids, seqs } = await queueMany(recipient, 4);
    // Today's config before AckAll, as an earlier edge created it (its defaults: 1 s, 64, memory).
    await addQueueConsumer(recipient, { ackWaitMs: 1000, ackPolicy: 'explicit' });
    const client = openClient(stack, edge.port, { recipient, v1: true });
    await client.opened;
    await waitUntil('all four', () => client.events.length === 4);
    expect(client.events.map((e) => e.id)).toEqual(ids);
    const more = await queueMany(recipient, 2, 4);
    await waitUntil('the two queued while connected', () => client.events.length === 6);
    expect(client.events.map((e) => e.id)).toEqual([...ids, ...more.ids]);
    await waitUntil('each acked', async () => {
      const info = await consumerInfo(stack, ACCOUNT_A, recipient);
      return info?.num_ack_pending === 0 && info.ack_floor.stream_seq === more.seqs[1];
    });
    const info = await consumerInfo(stack, ACCOUNT_A, recipient);
    expect(info?.config.ack_policy).toBe('explicit');
    expect(info?.ack_floor.stream_seq).toBeGreaterThan(seqs[3] as number);
    await closeClient(client);
  });
});

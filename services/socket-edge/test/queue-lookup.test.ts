import { randomUUID } from 'node:crypto';
import { createLogger } from '@herald/kit';
import { NatsRequester } from '@herald/nats';
import { subjects } from '@herald/proto';
import {
  QueueLayout,
  queueConsumerConfig,
  queueConsumerName,
  queueStreamConfig,
} from '@herald/queue';
import { type NatsServer, startNatsServer } from '@herald/testkit';
import {
  type ConsumerConfig,
  connect,
  type JetStreamManager,
  type NatsConnection,
  type StreamConfig,
} from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findQueueConsumer } from '../src/queue/queue-lookup.js';

const ACCOUNT = '0b6a5d3e-7c41-4f2a-9d0e-1a2b3c4d5e6f';
const ACK_WAIT_MS = 1000;
const NS_PER_MS = 1_000_000;
/** The edge's default (config.ts). */
const MAX_ACK_PENDING = 64;
/** Another edge's MAX_ACK_PENDING (an operator's change, or another release's default). */
const OTHER_MAX_ACK_PENDING = 128;
const layout = new QueueLayout(4);
/**
 * The API calls of a lookup that moves an existing consumer to this edge's config: the probe, the
 * refused create, its info, then nats.js's update (an info and the update itself).
 */
const MOVED_ONCE = [
  'STREAM.MSG',
  'CONSUMER.CREATE',
  'CONSUMER.INFO',
  'CONSUMER.INFO',
  'CONSUMER.CREATE',
];

let nats: NatsServer;
let nc: NatsConnection;
let watcher: NatsConnection;
let jsm: JetStreamManager;
/** Every JetStream API request any client sent, by subject (what the lookup costs the server). */
const apiCalls: string[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connect(nats.connectOptions());
  watcher = await connect(nats.connectOptions());
  jsm = await nc.jetstreamManager();
  for (let p = 0; p < layout.partitions; p++) {
    await jsm.streams.add(queueStreamConfig({}, layout, p) as unknown as Partial<StreamConfig>);
  }
  watcher.subscribe('$JS.API.>', { callback: (_err, msg) => apiCalls.push(msg.subject) });
  await watcher.flush();
}, 60_000);

afterAll(async () => {
  await watcher?.close();
  await nc?.close();
  await nats?.stop();
});

function lookup(recipient: string, memoryState = false, maxAckPending = MAX_ACK_PENDING) {
  return findQueueConsumer({
    js: nc.jetstream(),
    jsm: Promise.resolve(jsm),
    requester: new NatsRequester(nc),
    logger: createLogger('queue-lookup-test', 'silent'),
    stream: layout.streamOf(ACCOUNT, recipient),
    account: ACCOUNT,
    recipient,
    ackWaitMs: ACK_WAIT_MS,
    maxAckPending,
    memoryState,
  });
}

/** The API calls made by `run`, once the watcher has seen them all. */
async function callsOf(run: () => Promise<unknown>): Promise<string[]> {
  await watcher.flush();
  const from = apiCalls.length;
  await run();
  // The watcher receives each request as the server does; a round trip on it orders them.
  await nc.flush();
  await watcher.flush();
  return apiCalls.slice(from).map((s) => s.split('.').slice(2, 4).join('.'));
}

async function queue(recipient: string, count: number): Promise<void> {
  const js = nc.jetstream();
  for (let i = 0; i < count; i++)
    await js.publish(subjects.queue(ACCOUNT, recipient), new TextEncoder().encode(`{"n":${i}}`));
}

describe('findQueueConsumer', () => {
  it('asks the stream once and creates nothing for a recipient with nothing stored', async () => {
    const recipient = randomUUID();
    let found: unknown = 'unset';
    const calls = await callsOf(async () => {
      found = await lookup(recipient);
    });
    expect(found).toBeUndefined();
    expect(calls).toEqual(['STREAM.MSG']);
    const stream = layout.streamOf(ACCOUNT, recipient);
    await expect(jsm.consumers.info(stream, queueConsumerName(ACCOUNT, recipient))).rejects.toThrow(
      /consumer not found/,
    );
  });

  it('creates the consumer with one call, and finds it again with one call, ack state kept', async () => {
    const recipient = randomUUID();
    await queue(recipient, 3);
    let first: Awaited<ReturnType<typeof lookup>>;
    const createCalls = await callsOf(async () => {
      first = await lookup(recipient);
    });
    expect(createCalls).toEqual(['STREAM.MSG', 'CONSUMER.CREATE']);
    expect(first?.ackPending).toBe(0);
    // Take one delivery and leave it unacked: the next lookup must see it pending.
    const batch = await first?.consumer.fetch({ max_messages: 1, expires: 5000 });
    for await (const msg of batch ?? []) expect(msg.seq).toBeGreaterThan(0);
    let again: Awaited<ReturnType<typeof lookup>>;
    const againCalls = await callsOf(async () => {
      again = await lookup(recipient);
    });
    expect(againCalls).toEqual(['STREAM.MSG', 'CONSUMER.CREATE']);
    expect(again?.ackPending).toBe(1);
    const info = await again?.consumer.info();
    expect(info?.num_pending).toBe(2);
    expect(info?.delivered.consumer_seq).toBe(1);
  });

  it('moves a consumer made with another ack_wait (an earlier release) to this edge, once', async () => {
    const recipient = randomUUID();
    await queue(recipient, 1);
    const stream = layout.streamOf(ACCOUNT, recipient);
    const old = queueConsumerConfig(ACCOUNT, recipient, {
      ackWaitMs: 30_000,
      maxAckPending: MAX_ACK_PENDING,
    });
    await jsm.consumers.add(stream, old as unknown as Partial<ConsumerConfig>);
    let found: Awaited<ReturnType<typeof lookup>>;
    const calls = await callsOf(async () => {
      found = await lookup(recipient);
    });
    expect(calls).toEqual(MOVED_ONCE);
    expect(found).toBeDefined();
    const info = await jsm.consumers.info(stream, queueConsumerName(ACCOUNT, recipient));
    expect(info.config.ack_wait).toBe(ACK_WAIT_MS * NS_PER_MS);
    expect(info.num_pending).toBe(1);
    expect(await callsOf(() => lookup(recipient))).toEqual(['STREAM.MSG', 'CONSUMER.CREATE']);
  });

  it('moves a consumer made with another max_ack_pending to this edge once, ack state kept', async () => {
    const recipient = randomUUID();
    await queue(recipient, 3);
    const stream = layout.streamOf(ACCOUNT, recipient);
    const name = queueConsumerName(ACCOUNT, recipient);
    // Made by an edge with another MAX_ACK_PENDING, one delivery of it unacked and one acked.
    await lookup(recipient, false, OTHER_MAX_ACK_PENDING);
    const made = await jsm.consumers.info(stream, name);
    expect(made.config.max_ack_pending).toBe(OTHER_MAX_ACK_PENDING);
    const batch = await nc
      .jetstream()
      .consumers.getPullConsumerFor(made)
      .fetch({ max_messages: 2, expires: 5000 });
    let n = 0;
    for await (const msg of batch) if (n++ === 0) await msg.ackAck();
    expect(n).toBe(2);
    let found: Awaited<ReturnType<typeof lookup>>;
    const calls = await callsOf(async () => {
      found = await lookup(recipient);
    });
    expect(calls).toEqual(MOVED_ONCE);
    expect(found?.ackPending).toBe(1);
    const info = await jsm.consumers.info(stream, name);
    expect(info.config.max_ack_pending).toBe(MAX_ACK_PENDING);
    expect(info.config.ack_wait).toBe(ACK_WAIT_MS * NS_PER_MS);
    expect(info.num_ack_pending).toBe(1);
    expect(info.num_pending).toBe(1);
    expect(info.ack_floor.stream_seq).toBeGreaterThan(0);
    // Every later connect costs the probe and the create, as for a consumer this edge made.
    let again: Awaited<ReturnType<typeof lookup>>;
    expect(
      await callsOf(async () => {
        again = await lookup(recipient);
      }),
    ).toEqual(['STREAM.MSG', 'CONSUMER.CREATE']);
    expect(again?.ackPending).toBe(1);
  });

  it('creates a memory-state consumer with one call, and finds it again with one call', async () => {
    const recipient = randomUUID();
    await queue(recipient, 2);
    let found: Awaited<ReturnType<typeof lookup>>;
    const calls = await callsOf(async () => {
      found = await lookup(recipient, true);
    });
    expect(calls).toEqual(['STREAM.MSG', 'CONSUMER.CREATE']);
    const info = await found?.consumer.info();
    expect(info?.config.mem_storage).toBe(true);
    expect(info?.num_pending).toBe(2);
    const againCalls = await callsOf(() => lookup(recipient, true));
    expect(againCalls).toEqual(['STREAM.MSG', 'CONSUMER.CREATE']);
  });

  it('uses an existing consumer of the other state kind as it is, with its ack state', async () => {
    for (const [made, edge] of [
      [false, true],
      [true, false],
    ] as const) {
      const recipient = randomUUID();
      await queue(recipient, 3);
      const stream = layout.streamOf(ACCOUNT, recipient);
      const name = queueConsumerName(ACCOUNT, recipient);
      await lookup(recipient, made);
      // One event settled under the first kind: the other kind must not deliver it again.
      const first = await jsm.consumers.info(stream, name);
      const batch = await nc
        .jetstream()
        .consumers.getPullConsumerFor(first)
        .fetch({ max_messages: 1, expires: 5000 });
      let settled = 0;
      for await (const msg of batch) {
        settled = msg.seq;
        await msg.ackAck();
      }
      let found: Awaited<ReturnType<typeof lookup>>;
      const calls = await callsOf(async () => {
        found = await lookup(recipient, edge);
      });
      // The create is refused (another config): one consumer info more, as for an earlier release's.
      expect(calls).toEqual(['STREAM.MSG', 'CONSUMER.CREATE', 'CONSUMER.INFO']);
      expect(found).toBeDefined();
      const info = await jsm.consumers.info(stream, name);
      expect(info.config.mem_storage === true).toBe(made);
      expect(info.ack_floor.stream_seq).toBe(settled);
      expect(info.num_pending).toBe(2);
      const next = await found?.consumer.fetch({ max_messages: 2, expires: 5000 });
      const seqs: number[] = [];
      for await (const msg of next ?? []) seqs.push(msg.seq);
      expect(seqs).toHaveLength(2);
      expect(Math.min(...seqs)).toBeGreaterThan(settled);
    }
  });
});

import { randomUUID } from 'node:crypto';
import { type NatsServer, startNatsServer } from '@herald/testkit';
import { AckPolicy, connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ensureQueueFloorBucket,
  parseQueueFloorKey,
  QUEUE_FLOOR_BUCKET,
  QueueFloors,
  queueFloorKey,
} from '../src/index.js';

let server: NatsServer;
let nc: NatsConnection;
beforeAll(async () => {
  server = await startNatsServer();
  nc = await connect(server.connectOptions());
});
afterAll(async () => {
  await nc?.close();
  await server?.stop();
});

const account = randomUUID();
const DAY_NS = 86_400_000 * 1_000_000;

describe('recorded ack floors (lib/queue ack-floors.ts, a real nats-server)', () => {
  it('reads no floor and refuses to record while the bucket does not exist', async () => {
    const floors = new QueueFloors(nc, 2000);
    const recipient = randomUUID();
    expect(await floors.read(account, recipient)).toBeUndefined();
    await expect(
      floors.record(account, recipient, { v: 1, stream: 'S', seq: 1, id: 'x' }),
    ).rejects.toThrow();
  });

  it('makes the bucket once (file, history 1, TTL in days) and leaves an existing one as it is', async () => {
    await ensureQueueFloorBucket(nc.jetstream(), { ttlDays: 7 });
    const jsm = await nc.jetstreamManager();
    const made = await jsm.streams.info(`KV_${QUEUE_FLOOR_BUCKET}`);
    expect(made.config).toMatchObject({
      storage: 'file',
      max_msgs_per_subject: 1,
      max_age: 7 * DAY_NS,
      allow_direct: true,
    });
    await ensureQueueFloorBucket(nc.jetstream(), { ttlDays: 30 });
    expect((await jsm.streams.info(`KV_${QUEUE_FLOOR_BUCKET}`)).config.max_age).toBe(7 * DAY_NS);
  });

  it('keeps the last floor per recipient, and ignores a value that is not a floor', async () => {
    const floors = new QueueFloors(nc, 2000);
    const recipient = randomUUID();
    await floors.record(account, recipient, { v: 1, stream: 'S', seq: 3, id: 'a' });
    await floors.record(account, recipient, { v: 1, stream: 'S', seq: 9, id: 'b' });
    expect(await floors.read(account, recipient)).toEqual({ v: 1, stream: 'S', seq: 9, id: 'b' });
    await expect(
      floors.record(account, recipient, { v: 1, stream: 'S', seq: 0, id: 'c' }),
    ).rejects.toThrow();

    const garbled = randomUUID();
    const kv = await nc.jetstream().views.kv(QUEUE_FLOOR_BUCKET, { bindOnly: true });
    await kv.put(queueFloorKey(account, garbled), '{"v":1,"stream":"S","seq":"nine"}');
    expect(await floors.read(account, garbled)).toBeUndefined();
    await kv.put(queueFloorKey(account, garbled), 'not json');
    expect(await floors.read(account, garbled)).toBeUndefined();
    // A deleted floor reads as none (its last value is the delete marker).
    const deleted = randomUUID();
    await floors.record(account, deleted, { v: 1, stream: 'S', seq: 4, id: 'd' });
    expect(await floors.read(account, deleted)).toEqual({ v: 1, stream: 'S', seq: 4, id: 'd' });
    await kv.delete(queueFloorKey(account, deleted));
    expect(await floors.read(account, deleted)).toBeUndefined();

    // A consumer's floor, as the edge reads it before recording one; none for a missing consumer.
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'FLOORS_T', subjects: ['floors.t.>'] });
    for (let n = 0; n < 3; n++) await nc.jetstream().publish('floors.t.a', new Uint8Array(1));
    await jsm.consumers.add('FLOORS_T', {
      durable_name: 'c',
      ack_policy: AckPolicy.Explicit,
      mem_storage: true,
    });
    const consumer = await nc.jetstream().consumers.get('FLOORS_T', 'c');
    const first = await consumer.next();
    await first?.ackAck();
    expect(await floors.consumerFloor('FLOORS_T', 'c')).toEqual({ ackFloor: 1, memoryState: true });
    expect(await floors.consumerFloor('FLOORS_T', 'none')).toBeUndefined();
    // Moved past a floor (a consumer reset): its ack floor reads the floor, its config is kept.
    const floor = { v: 1 as const, stream: 'FLOORS_T', seq: 2, id: 'x' };
    const reset = await floors.resumeAfter('FLOORS_T', 'c', floor);
    expect(reset?.ack_floor.stream_seq).toBe(2);
    expect(reset?.num_pending).toBe(1);
    expect(reset?.config.deliver_policy).toBe('all');
    expect((await consumer.next())?.seq).toBe(3);
    // The reset subject is the consumer leader's own subscription: no consumer, no answer.
    await expect(floors.resumeAfter('FLOORS_T', 'none', floor)).rejects.toThrow(/no answer/);

    const keys: string[] = [];
    for await (const key of await floors.keys()) keys.push(key);
    expect(keys).toContain(queueFloorKey(account, recipient));
    expect(parseQueueFloorKey(queueFloorKey(account, recipient))).toEqual({ account, recipient });
    expect(parseQueueFloorKey('_lock')).toBeUndefined();
  });
});

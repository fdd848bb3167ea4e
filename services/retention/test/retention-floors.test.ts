import { randomUUID } from 'node:crypto';
import { QueueFloors, queueConsumerConfig, queueConsumerName, queueStreamOf } from '@herald/queue';
import type { ConsumerConfig } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  consumerExists,
  deliver,
  dispatchMany,
  stored,
  storedIds,
  uuid,
} from './support/queue-fixture.js';
import { type RetentionFixture, startRetentionFixture } from './support/retention-fixture.js';

let f: RetentionFixture;
beforeAll(async () => {
  f = await startRetentionFixture();
});
afterAll(async () => {
  await f?.close();
});

/**
 * The edges record an ack floor per recipient for memory-state consumers (lib/queue
 * ack-floors.ts). When a nats-server restart has lost such a consumer and the recipient has not
 * connected since, no consumer lists the recipient: the recorded floor is what lets the weekly run
 * still delete what was delivered.
 */
describe('retention run: recorded ack floors', () => {
  it('deletes up to a recorded floor of a recipient with no consumer, and nothing when the event there is another', async () => {
    const floors = new QueueFloors(f.nc, 5000);
    const a = uuid();
    const [lost, remade, elsewhere] = [uuid(), uuid(), uuid()];
    for (const r of [lost, remade, elsewhere]) await dispatchMany(f.nc, a, r, 5);
    const events = async (r: string) => stored(f.jsm, a, r);
    const lostEvents = await events(lost);
    const remadeEvents = await events(remade);
    const elsewhereEvents = await events(elsewhere);
    await floors.record(a, lost, {
      v: 1,
      stream: queueStreamOf(a, lost),
      seq: lostEvents[2]?.seq as number,
      id: lostEvents[2]?.id as string,
    });
    // The stream was made again since the floor was recorded: another event at its sequence.
    await floors.record(a, remade, {
      v: 1,
      stream: queueStreamOf(a, remade),
      seq: remadeEvents[2]?.seq as number,
      id: randomUUID(),
    });
    // Recorded on another partition stream (another QUEUE_PARTITIONS).
    await floors.record(a, elsewhere, {
      v: 1,
      stream: 'HERALD_QUEUE_ELSEWHERE',
      seq: elsewhereEvents[2]?.seq as number,
      id: elsewhereEvents[2]?.id as string,
    });

    const summary = await f.retention().runOnce();
    expect(summary).toMatchObject({ outcome: 'completed', events_purged: 3, errors: 0 });
    expect(await storedIds(f.jsm, a, lost)).toEqual(lostEvents.slice(3).map((e) => e.id));
    expect(await storedIds(f.jsm, a, remade)).toEqual(remadeEvents.map((e) => e.id));
    expect(await storedIds(f.jsm, a, elsewhere)).toEqual(elsewhereEvents.map((e) => e.id));
    expect(await consumerExists(f.jsm, a, lost)).toBe(false);

    // The floor's event is gone now: the next run finds nothing more to delete.
    const again = await f.retention().runOnce();
    expect(again).toMatchObject({ outcome: 'completed', events_purged: 0, errors: 0 });
    expect(await storedIds(f.jsm, a, lost)).toEqual(lostEvents.slice(3).map((e) => e.id));
  });

  it('deletes up to the floor of a consumer moved past it after a restart, and reaps it once drained', async () => {
    // As an edge does after a nats-server restart lost the recipient's memory-state consumer:
    // made again (DeliverAll) and reset to the event after the recorded floor. Its ack floor then
    // reads the floor, below the first event it delivers: the start sequence minus one.
    const floors = new QueueFloors(f.nc, 5000);
    const a = uuid();
    const r = uuid();
    await dispatchMany(f.nc, a, r, 5);
    const events = await stored(f.jsm, a, r);
    const stream = queueStreamOf(a, r);
    const name = queueConsumerName(a, r);
    const floor = {
      v: 1 as const,
      stream,
      seq: events[2]?.seq as number,
      id: events[2]?.id as string,
    };
    await floors.record(a, r, floor);
    await f.jsm.consumers.add(
      stream,
      queueConsumerConfig(a, r, { memoryState: true }) as unknown as ConsumerConfig,
    );
    const reset = await floors.resumeAfter(stream, name, floor);
    expect(reset?.ack_floor.stream_seq).toBe(floor.seq);
    expect(reset?.num_pending).toBe(2);
    expect(reset?.config.deliver_policy).toBe('all');
    expect(await floors.consumerFloor(stream, name)).toEqual({
      ackFloor: floor.seq,
      memoryState: true,
    });

    const first = await f.retention().runOnce();
    expect(first).toMatchObject({ outcome: 'completed', events_purged: 3, consumers_reaped: 0 });
    expect(await storedIds(f.jsm, a, r)).toEqual(events.slice(3).map((e) => e.id));

    // It delivers the two after the floor (nothing before it), both acked: drained, reaped.
    expect(await deliver(f.nc, f.jsm, a, r, 2)).toEqual(events.slice(3).map((e) => e.id));
    const second = await f.retention().runOnce();
    expect(second).toMatchObject({ outcome: 'completed', events_purged: 2, consumers_reaped: 1 });
    expect(await storedIds(f.jsm, a, r)).toEqual([]);
    expect(await consumerExists(f.jsm, a, r)).toBe(false);
  });
});

import { randomUUID } from 'node:crypto';
import { QueueFloors, queueStreamOf } from '@herald/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerExists, dispatchMany, stored, storedIds, uuid } from './support/queue-fixture.js';
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
});

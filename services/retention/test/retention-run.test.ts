import { subjects } from '@herald/proto';
import { queueConsumerConfig, queueConsumerName, queueStreamOf } from '@herald/queue';
import { pinnedNatsVersion } from '@herald/testkit';
import type { ConsumerConfig } from 'nats';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EdgeSim } from './support/edge-sim.js';
import {
  consumerExists,
  deleteQueueStreams,
  deliver,
  dispatch,
  dispatchMany,
  layout,
  queueState,
  storedIds,
  uuid,
} from './support/queue-fixture.js';

const FIRST = layout.streams[0] as string;

import { type RetentionFixture, startRetentionFixture } from './support/retention-fixture.js';

let f: RetentionFixture;
beforeAll(async () => {
  f = await startRetentionFixture();
});
afterAll(async () => {
  await f?.close();
});
beforeEach(async () => {
  await f.resetQueue();
});

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('retention run (the pinned nats-server)', () => {
  it('purges acked events, keeps never-delivered and delivered-unacked ones; a second run purges nothing', async () => {
    const a = uuid();
    const [acked, noConsumer, neverFetched, halfAcked] = [uuid(), uuid(), uuid(), uuid()];
    await dispatchMany(f.nc, a, acked, 5);
    await deliver(f.nc, f.jsm, a, acked, 5);
    const waiting = await dispatchMany(f.nc, a, noConsumer, 3);
    const idle = await dispatchMany(f.nc, a, neverFetched, 3);
    await addConsumer(a, neverFetched);
    const partial = await dispatchMany(f.nc, a, halfAcked, 4);
    // First acked, second delivered but never acked (its client went away).
    await deliver(f.nc, f.jsm, a, halfAcked, 2, 1, { ackWaitMs: 1000 });

    const retention = f.retention();
    const first = await retention.runOnce();
    expect(first).toMatchObject({
      outcome: 'completed',
      recipients_scanned: 3,
      events_purged: 6,
      consumers_reaped: 1,
      errors: 0,
      server_version: pinnedNatsVersion(),
    });
    expect(await storedIds(f.jsm, a, acked)).toEqual([]);
    expect(await storedIds(f.jsm, a, noConsumer)).toEqual(waiting);
    expect(await storedIds(f.jsm, a, neverFetched)).toEqual(idle);
    expect(await storedIds(f.jsm, a, halfAcked)).toEqual(partial.slice(1));
    expect(await consumerExists(f.jsm, a, acked)).toBe(false);
    const kept = await f.jsm.consumers.info(
      queueStreamOf(a, halfAcked),
      queueConsumerName(a, halfAcked),
    );
    // Deleting the acked event left the consumer's state alone: its unacked delivery is still pending.
    expect(kept.num_ack_pending).toBe(1);

    const second = await retention.runOnce();
    expect(second).toMatchObject({
      outcome: 'completed',
      events_purged: 0,
      consumers_reaped: 0,
      errors: 0,
    });
    expect(second.events_stored).toBe(9);

    // The unacked delivery survived the purge: it comes again, then the rest, once each.
    const edge = new EdgeSim(f.nc, f.jsm, a, halfAcked);
    edge.connect();
    await edge.waitFor(3);
    await settle(200);
    await edge.disconnect();
    // JetStream redelivers an unacked event after ack_wait, behind newer ones: order is the server's.
    expect([...edge.delivered].sort()).toEqual(partial.slice(1).sort());
  });

  it('a partly acked queue loses only its acked prefix; the rest comes on the next connect, in order, exactly once', async () => {
    const [a, r] = [uuid(), uuid()];
    const ids = await dispatchMany(f.nc, a, r, 10);
    expect(await deliver(f.nc, f.jsm, a, r, 4)).toEqual(ids.slice(0, 4));

    const retention = f.retention();
    expect(await retention.runOnce()).toMatchObject({ events_purged: 4, consumers_reaped: 0 });
    expect(await storedIds(f.jsm, a, r)).toEqual(ids.slice(4));

    const edge = new EdgeSim(f.nc, f.jsm, a, r);
    edge.connect();
    await edge.waitFor(6);
    await settle(300);
    await edge.disconnect();
    expect(edge.delivered).toEqual(ids.slice(4));

    expect(await retention.runOnce()).toMatchObject({ events_purged: 6, consumers_reaped: 1 });
    expect(await storedIds(f.jsm, a, r)).toEqual([]);
  });

  it('reaps a drained consumer; a later dispatch is queued and delivered normally, nothing redelivered', async () => {
    const [a, r] = [uuid(), uuid()];
    const ids = await dispatchMany(f.nc, a, r, 3);
    const edge = new EdgeSim(f.nc, f.jsm, a, r);
    edge.connect();
    await edge.waitFor(3);
    await edge.disconnect();
    expect(edge.delivered).toEqual(ids);

    expect(await f.retention().runOnce()).toMatchObject({ events_purged: 3, consumers_reaped: 1 });
    expect(await consumerExists(f.jsm, a, r)).toBe(false);
    expect((await queueState(f.jsm)).consumer_count).toBe(0);

    const later = await dispatch(f.nc, a, r);
    const again = new EdgeSim(f.nc, f.jsm, a, r);
    again.connect();
    await again.waitFor(1);
    await settle(300);
    await again.disconnect();
    expect(again.delivered).toEqual([later]);
  });

  it('does not reap a consumer an edge is pulling on, even with nothing left', async () => {
    const [a, r] = [uuid(), uuid()];
    await dispatchMany(f.nc, a, r, 2);
    const edge = new EdgeSim(f.nc, f.jsm, a, r);
    edge.connect();
    await edge.waitFor(2);
    const summary = await f.retention().runOnce();
    expect(summary).toMatchObject({ events_purged: 2, consumers_reaped: 0 });
    expect(await consumerExists(f.jsm, a, r)).toBe(true);
    const next = await dispatch(f.nc, a, r);
    await edge.waitFor(3);
    await edge.disconnect();
    expect(edge.delivered.at(-1)).toBe(next);
    expect(await f.retention().runOnce()).toMatchObject({ events_purged: 1, consumers_reaped: 1 });
  });

  it('visits every consumer across pages (the server pages by 256) while deleting some of them', async () => {
    const a = uuid();
    const recipients = Array.from({ length: 300 }, () => uuid());
    for (const r of recipients) await dispatch(f.nc, a, r);
    // Every other recipient fully delivered: reaping them shifts the pages under the walk.
    for (const r of recipients.filter((_, i) => i % 2 === 0)) await deliver(f.nc, f.jsm, a, r, 1);
    for (const r of recipients.filter((_, i) => i % 2 === 1)) await addConsumer(a, r);
    const summary = await f.retention().runOnce();
    expect(summary).toMatchObject({
      recipients_scanned: 300,
      events_purged: 150,
      consumers_reaped: 150,
      errors: 0,
    });
    expect((await queueState(f.jsm)).consumer_count).toBe(150);
  });

  it('ignores consumers that are not recipient queue consumers', async () => {
    await f.jsm.consumers.add(FIRST, {
      durable_name: 'audit',
      ack_policy: 'explicit',
    } as never);
    expect(await f.retention().runOnce()).toMatchObject({
      outcome: 'completed',
      recipients_scanned: 0,
      errors: 0,
    });
    expect((await f.jsm.consumers.info(FIRST, 'audit')).name).toBe('audit');
  });

  it('refuses to purge a stream that captures more than rt.queue.>', async () => {
    const info = await f.jsm.streams.info(FIRST);
    await f.jsm.streams.update(FIRST, {
      ...info.config,
      subjects: [...(info.config.subjects ?? []), 'rt.other.>'],
    });
    const summary = await f.retention().runOnce();
    expect(summary.outcome).toBe('failed');
    expect(summary.reason).toMatch(/refusing to delete from it/);
  });

  it('completes with nothing to do when the queue stream does not exist yet', async () => {
    await deleteQueueStreams(f.jsm);
    const summary = await f.retention().runOnce();
    expect(summary).toMatchObject({ outcome: 'completed', recipients_scanned: 0 });
    expect(summary.reason).toMatch(/does not exist yet/);
  });
});

describe('the race windows, forced with the sweep hooks', () => {
  it('an edge handed an event between the check and the deletions keeps it: never lost on 2.9.10', async () => {
    const [a, r] = [uuid(), uuid()];
    const ids = await dispatchMany(f.nc, a, r, 3);
    await deliver(f.nc, f.jsm, a, r, 2, 2, { ackWaitMs: 1000 });
    const retention = f.retention(
      {},
      {
        hooks: {
          // An edge connects right here and is handed the third event; its client never acks. A
          // purge of the consumer's subject would make 2.9.10 forget that delivery forever.
          afterCheck: async () => void (await deliver(f.nc, f.jsm, a, r, 1, 0)),
        },
      },
    );
    expect(await retention.runOnce()).toMatchObject({
      events_purged: 2,
      consumers_reaped: 0,
      errors: 0,
    });
    expect(await storedIds(f.jsm, a, r)).toEqual([ids[2]]);
    expect(
      (await f.jsm.consumers.info(queueStreamOf(a, r), queueConsumerName(a, r))).num_ack_pending,
    ).toBe(1);

    const edge = new EdgeSim(f.nc, f.jsm, a, r);
    edge.connect();
    await edge.waitFor(1);
    await edge.disconnect();
    expect(edge.delivered).toEqual([ids[2]]);
  });

  it('a delivery between the first and the last check stops the reap; nothing is redelivered', async () => {
    const [a, r] = [uuid(), uuid()];
    await dispatchMany(f.nc, a, r, 2);
    await deliver(f.nc, f.jsm, a, r, 2);
    let late = '';
    const retention = f.retention(
      {},
      {
        hooks: {
          afterCheck: async () => {
            late = await dispatch(f.nc, a, r);
            await deliver(f.nc, f.jsm, a, r, 1);
          },
        },
      },
    );
    expect(await retention.runOnce()).toMatchObject({ events_purged: 2, consumers_reaped: 0 });
    expect(await storedIds(f.jsm, a, r)).toEqual([late]);

    const edge = new EdgeSim(f.nc, f.jsm, a, r);
    edge.connect();
    await settle(300);
    await edge.disconnect();
    expect(edge.delivered).toEqual([]);
    expect(await f.retention().runOnce()).toMatchObject({ events_purged: 1, consumers_reaped: 1 });
  });

  it('an event stored after the last check is announced and delivered once', async () => {
    const [a, r] = [uuid(), uuid()];
    await dispatchMany(f.nc, a, r, 2);
    await deliver(f.nc, f.jsm, a, r, 2);
    let late = '';
    const announced: string[] = [];
    const sub = f.nc.subscribe(subjects.queued(a, r), {
      callback: (_e, m) => announced.push(m.string()),
    });
    const retention = f.retention(
      {},
      {
        hooks: {
          beforeDelete: async () => {
            late = await dispatch(f.nc, a, r);
          },
        },
      },
    );
    expect(await retention.runOnce()).toMatchObject({ events_purged: 2, consumers_reaped: 1 });
    expect(await storedIds(f.jsm, a, r)).toEqual([late]);
    await f.nc.flush();
    expect(announced.map((s) => JSON.parse(s).id)).toContain(late);
    sub.unsubscribe();

    const edge = new EdgeSim(f.nc, f.jsm, a, r);
    edge.connect();
    await edge.waitFor(1);
    await settle(200);
    await edge.disconnect();
    expect(edge.delivered).toEqual([late]);
  });

  it('the residual window: an event delivered and acked after the last check comes once more, never lost', async () => {
    const [a, r] = [uuid(), uuid()];
    await dispatchMany(f.nc, a, r, 2);
    await deliver(f.nc, f.jsm, a, r, 2);
    let late = '';
    const retention = f.retention(
      {},
      {
        hooks: {
          // Stored, pulled, delivered and acked inside one API round trip: the one case a reap can
          // still turn into a duplicate (same Herald-Id, which herald.v1 clients drop).
          beforeDelete: async () => {
            late = await dispatch(f.nc, a, r);
            await deliver(f.nc, f.jsm, a, r, 1);
          },
        },
      },
    );
    expect(await retention.runOnce()).toMatchObject({ events_purged: 2, consumers_reaped: 1 });
    expect(await storedIds(f.jsm, a, r)).toEqual([late]);
    const edge = new EdgeSim(f.nc, f.jsm, a, r);
    edge.connect();
    await edge.waitFor(1);
    await edge.disconnect();
    expect(edge.delivered).toEqual([late]);
  });

  it('a failure mid-recipient is counted, and the next run finishes the job', async () => {
    const [a, r] = [uuid(), uuid()];
    await dispatchMany(f.nc, a, r, 2);
    await deliver(f.nc, f.jsm, a, r, 2);
    const failing = f.retention(
      {},
      {
        hooks: {
          afterCheck: async () => {
            throw new Error('NATS went away');
          },
        },
      },
    );
    expect(await failing.runOnce()).toMatchObject({
      outcome: 'completed',
      errors: 1,
      events_purged: 0,
    });
    expect(await f.retention().runOnce()).toMatchObject({
      events_purged: 2,
      consumers_reaped: 1,
      errors: 0,
    });
  });
});

async function addConsumer(a: string, r: string) {
  return f.jsm.consumers.add(
    queueStreamOf(a, r),
    queueConsumerConfig(a, r) as unknown as ConsumerConfig,
  );
}

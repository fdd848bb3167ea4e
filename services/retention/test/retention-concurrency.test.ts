import { connect } from 'nats';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LOCK_BUCKET, RunLock } from '../src/run-lock.js';
import type { RunSummary } from '../src/run-summary.js';
import { EdgeSim } from './support/edge-sim.js';
import {
  deliver,
  dispatch,
  dispatchMany,
  queueState,
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
beforeEach(async () => {
  await f.resetQueue();
});

const LOCK_TTL = '1500';
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('runs racing live drains', () => {
  it('loses nothing and duplicates nothing over many iterations of dispatches, reconnects and runs', async () => {
    const a = uuid();
    // Short pulls, so a disconnected edge's pull expires and its consumer becomes reapable mid-test;
    // a short ack_wait, so what consume() had prefetched when an edge disconnected comes back soon.
    const queues = Array.from({ length: 4 }, () => {
      const r = uuid();
      const edge = new EdgeSim(f.nc, f.jsm, a, r, {
        pullExpiresMs: 1000,
        consumer: { ackWaitMs: 1000 },
      });
      return { r, edge, sent: [] as string[] };
    });
    const retention = f.retention({ RETENTION_LOCK_TTL_MS: LOCK_TTL });

    const runs: RunSummary[] = [];
    let racing = true;
    const runner = (async () => {
      while (racing) {
        runs.push(await retention.runOnce());
        await settle(5);
      }
    })();

    for (let i = 0; i < 60; i++) {
      for (const [k, q] of queues.entries()) {
        for (let j = 0; j < (i + k) % 3; j++)
          q.sent.push(await dispatch(f.nc, a, q.r, `{"i":${i},"j":${j}}`));
        if ((i * 7 + k * 3) % 5 < 2) q.edge.connect();
        else if ((i * 5 + k) % 4 === 0) await q.edge.disconnect();
      }
      await settle(15);
    }

    // The schedule above usually leaves a drained, idle consumer for a racing run to reap, but not
    // on every machine's timing: make sure of one. Recipient 0 takes everything, its edge leaves,
    // and once its last pull expires (pullExpiresMs) a run reaps its consumer.
    const [first] = queues;
    if (!first) throw new Error('no queues');
    first.edge.connect();
    await first.edge.waitFor(first.sent.length, 20_000);
    await first.edge.disconnect();
    const reaped = () => runs.reduce((n, s) => n + s.consumers_reaped, 0);
    for (const until = Date.now() + 15_000; reaped() === 0 && Date.now() < until; )
      await settle(50);

    for (const q of queues) q.edge.connect();
    await Promise.all(queues.map((q) => q.edge.waitFor(q.sent.length, 20_000)));
    await settle(300);
    racing = false;
    await runner;
    for (const q of queues) await q.edge.disconnect();
    await settle(1200); // the edges' last pulls expire

    runs.push(await retention.runOnce());
    for (const [k, q] of queues.entries()) {
      const got = q.edge.delivered;
      expect(new Set(got).size, `duplicates for recipient ${k}`).toBe(got.length);
      expect([...got].sort()).toEqual([...q.sent].sort());
      expect(await storedIds(f.jsm, a, q.r)).toEqual([]);
    }
    const total = queues.reduce((n, q) => n + q.sent.length, 0);
    expect(runs.every((s) => s.outcome === 'completed' && s.errors === 0)).toBe(true);
    // Every event purged exactly once, across all the runs.
    expect(runs.reduce((n, s) => n + s.events_purged, 0)).toBe(total);
    // The race really raced: purges and reaps happened while edges came and went.
    expect(runs.filter((s) => s.events_purged > 0).length).toBeGreaterThan(5);
    expect(runs.slice(0, -1).reduce((n, s) => n + s.consumers_reaped, 0)).toBeGreaterThan(0);
    expect((await queueState(f.jsm)).consumer_count).toBe(0);
  }, 60_000);
});

describe('two retention instances', () => {
  it('do not run at once: the second is skipped and names the holder', async () => {
    const [a, r] = [uuid(), uuid()];
    await dispatchMany(f.nc, a, r, 2);
    await deliver(f.nc, f.jsm, a, r, 2);
    const second = f.retention({ RETENTION_LOCK_TTL_MS: LOCK_TTL }, { instanceId: 'second' });
    let secondSummary: RunSummary | undefined;
    const first = f.retention(
      { RETENTION_LOCK_TTL_MS: LOCK_TTL },
      {
        instanceId: 'first',
        hooks: {
          afterCheck: async () => {
            secondSummary = await second.runOnce();
          },
        },
      },
    );
    const firstSummary = await first.runOnce();
    expect(firstSummary).toMatchObject({
      outcome: 'completed',
      events_purged: 2,
      consumers_reaped: 1,
    });
    expect(secondSummary).toMatchObject({
      outcome: 'skipped',
      events_purged: 0,
      lock_holder: { holder: 'first' },
    });
    // Released: the next run goes ahead.
    expect((await second.runOnce()).outcome).toBe('completed');
  });

  it('a holder that dies without releasing frees the lock when its TTL runs out', async () => {
    const nc2 = await connect(f.server.connectOptions());
    const lock = await RunLock.open(nc2.jetstream(), Number(LOCK_TTL));
    const held = await lock.acquire({
      holder: 'crashed',
      run_id: 'x',
      started_at: new Date().toISOString(),
    });
    expect(held.ok).toBe(true);
    await nc2.close(); // dies: no refresh, no release

    const retention = f.retention({ RETENTION_LOCK_TTL_MS: LOCK_TTL });
    expect(await retention.runOnce()).toMatchObject({
      outcome: 'skipped',
      lock_holder: { holder: 'crashed' },
    });
    let outcome = '';
    for (let i = 0; i < 40 && outcome !== 'completed'; i++) {
      await settle(100);
      outcome = (await retention.runOnce()).outcome;
    }
    expect(outcome).toBe('completed');
  });

  it('a run whose lock was taken over stops at the next recipient', async () => {
    const a = uuid();
    const recipients = [uuid(), uuid(), uuid()];
    for (const r of recipients) {
      await dispatch(f.nc, a, r);
      await deliver(f.nc, f.jsm, a, r, 1);
    }
    const kv = await f.nc.jetstream().views.kv(LOCK_BUCKET);
    let stolen = false;
    const retention = f.retention(
      { RETENTION_LOCK_TTL_MS: LOCK_TTL },
      {
        hooks: {
          afterCheck: async () => {
            if (stolen) return;
            stolen = true;
            // As if this run had stalled past its TTL and another instance took over.
            await kv.purge('run-lock');
            await kv.create(
              'run-lock',
              JSON.stringify({ holder: 'other', run_id: 'y', started_at: '' }),
            );
            await settle(700); // more than one refresh interval (TTL / 3)
          },
        },
      },
    );
    const summary = await retention.runOnce();
    expect(summary.outcome).toBe('aborted');
    expect(summary.reason).toMatch(/lost the run lock/);
    expect(summary.recipients_scanned).toBe(1);
    // It never deleted the other instance's lock.
    expect((await kv.get('run-lock'))?.json()).toMatchObject({ holder: 'other' });
    await kv.purge('run-lock');
  });
});

describe('shutdown', () => {
  it('abandons a run at the next safe point (between two events), leaving every recipient consistent', async () => {
    const a = uuid();
    const recipients = [uuid(), uuid()];
    for (const r of recipients) {
      await dispatchMany(f.nc, a, r, 2);
      await deliver(f.nc, f.jsm, a, r, 2);
    }
    let closing: Promise<void> | undefined;
    const retention = f.retention(
      { RETENTION_LOCK_TTL_MS: LOCK_TTL },
      {
        hooks: {
          afterCheck: async () => {
            closing ??= retention.close();
          },
        },
      },
    );
    const summary = await retention.runOnce();
    await closing;
    expect(summary).toMatchObject({
      outcome: 'aborted',
      reason: 'shutting down',
      recipients_scanned: 1,
      events_purged: 0,
      consumers_reaped: 0,
    });
    for (const r of recipients) expect(await storedIds(f.jsm, a, r)).toHaveLength(2);
    // The lock was released: another instance can run at once and finishes the job.
    expect(await f.retention({ RETENTION_LOCK_TTL_MS: LOCK_TTL }).runOnce()).toMatchObject({
      outcome: 'completed',
      events_purged: 4,
      consumers_reaped: 2,
    });
  });
});

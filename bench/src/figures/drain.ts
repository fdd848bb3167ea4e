import { performance } from 'node:perf_hooks';
import { queueStreamConfig } from '@herald/queue';
import { KOA_STREAM, KOA_SUBJECTS } from '../baselines/names.js';
import { PeerCollector, peerRows } from '../report/peers.js';
import {
  type FigureResult,
  formatNumber,
  RowCollector,
  ratioAtLeast,
  valueCheck,
} from '../report/results.js';
import type { BenchContext } from './context.js';
import { drainMany } from './drain-many.js';
import { drainOne } from './drain-one.js';
import { type DrainRun, drainMetrics, SUBJECTS } from './drain-rows.js';
import { resetQueue } from './queue-prep.js';

export { SUBJECTS } from './drain-rows.js';

/**
 * Figure 4: draining queued events on reconnect, through Herald's herald.v1 framing (what the SDK
 * speaks: every event acked by the client) against a raw ordered consumer replaying the same
 * stored messages. (a) one recipient with a deep queue; (b) many recipients reconnecting at once.
 */
export async function drain(ctx: BenchContext): Promise<FigureResult> {
  const started = performance.now();
  const { config } = ctx;
  const rows = new RowCollector('4');
  const peers = new PeerCollector('4');
  const row = peerRows(config);
  const notes: string[] = [];
  const metric = drainMetrics(config);
  const { oneMetric, manyDelivered, manyP99 } = metric;
  const seq = { next: 0 };
  // Figure 3 left its offline events in the stream; every run starts from an empty queue. The
  // design floor stores into figure 3's koa stream (its configuration is the queue's).
  await resetQueue(ctx);
  await ctx.jsm.streams.add({
    ...queueStreamConfig(),
    name: KOA_STREAM,
    subjects: [KOA_SUBJECTS],
  } as Parameters<typeof ctx.jsm.streams.add>[0]);
  // The inbox device rows' key (issue 42): an inbox key's device catches up from the inbox store.
  const inbox = await ctx.stack.createTenant({ inboxDays: 1 });
  try {
    for (let run = 0; run < config.runs; run++) {
      ctx.checkDeadline();
      const out: DrainRun = { rows, peers, row, notes, metric, run, seq, inbox };
      const one = await drainOne(ctx, out);
      const many = await drainMany(ctx, out);
      ctx.log(
        `figure 4: run ${run + 1}/${config.runs}: (a) Herald ${formatNumber(one.herald)}/s vs raw ${formatNumber(one.raw)}/s, design floor ${formatNumber(one.floor)}/s, SDK default client ${one.devices}; ${many}`,
      );
    }
  } finally {
    await ctx.jsm.streams.delete(KOA_STREAM).catch(() => false);
  }
  return {
    id: '4',
    title: 'Drain on reconnect',
    rows: rows.rows(),
    checks: [
      ratioAtLeast(
        '4',
        '(a) Herald ≥ 0.5× raw ordered replay',
        rows.median(oneMetric, SUBJECTS.herald),
        rows.median(oneMetric, SUBJECTS.raw),
        0.5,
      ),
      valueCheck(
        '4',
        '(b) 100% delivered',
        rows.median(manyDelivered, SUBJECTS.herald),
        '%',
        (v) => v === 100,
      ),
      valueCheck(
        '4',
        '(b) p99 ≤ 2 s',
        rows.median(manyP99, SUBJECTS.herald),
        'ms',
        (v) => v <= 2000,
      ),
    ],
    ratios: [
      rows.ratio(`${oneMetric}: Herald ÷ raw replay`, oneMetric, SUBJECTS.herald, SUBJECTS.raw),
      rows.ratio(
        `${oneMetric}: design floor ÷ raw replay`,
        oneMetric,
        SUBJECTS.floor,
        SUBJECTS.raw,
      ),
      rows.ratio(`${oneMetric}: Herald ÷ design floor`, oneMetric, SUBJECTS.herald, SUBJECTS.floor),
      // Issue 42: the SDK's default client against the device-less socket of the same run.
      ...[
        SUBJECTS.heraldDevice('first device'),
        SUBJECTS.heraldDevice('second device'),
        SUBJECTS.heraldInboxDevice('first device'),
        SUBJECTS.heraldInboxDevice('second device'),
      ].map((subject) =>
        rows.ratio(
          `${oneMetric}: ${subject.replace('Herald socket-edge, ', '')} ÷ no device`,
          oneMetric,
          subject,
          SUBJECTS.herald,
        ),
      ),
      rows.ratio(
        `${manyP99}: every socket with a device ÷ no device`,
        manyP99,
        SUBJECTS.heraldDevice('every socket a first device'),
        SUBJECTS.herald,
      ),
    ],
    peers: peers.lines(),
    notes,
    elapsedMs: performance.now() - started,
  };
}

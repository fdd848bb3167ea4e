import { randomUUID } from 'node:crypto';
import { closedLoop } from '../load/pace.js';
import { declare, type PeerRow, type System } from '../report/peers.js';
import { formatNumber } from '../report/results.js';
import type { BenchContext } from './context.js';
import { PROCESSES } from './cpu-meter.js';
import { countRows, type DrainRun, SUBJECTS } from './drain-rows.js';
import { metered } from './drain-store.js';
import { type HeraldClient, reconnect } from './drain-storm.js';
import { expectBatch, notifyBatchBody } from './herald-wire.js';
import { queueEvents, resetQueue } from './queue-prep.js';

/** A peer's value in the same run, added beside Herald's on the SDK client's lines. */
export interface PeerValue {
  system: System;
  rate: number;
  cpuPerEventUs: number;
}

/**
 * Figure 4 (a) with the SDK's default client (issue 42): the same deep queue drained by a first
 * device (never connected before: the durable consumer's drain and the device's catch-up at once)
 * and then by a second device of the same recipient (its catch-up alone), for a queue key and an
 * inbox key (whose device catches up from the inbox store). Centrifugo's drain of the same run
 * stands beside each. Leaves the queue empty. The run's log text.
 */
export async function drainDevices(
  ctx: BenchContext,
  out: DrainRun,
  peersOfRun: readonly PeerValue[],
): Promise<string> {
  const { rows, peers, row, notes, metric, run, seq } = out;
  const n = ctx.config.drainOne;
  const line: string[] = [];
  const sides = [
    {
      subject: SUBJECTS.heraldDevice,
      rows: [row.drainFirst, row.drainSecond] as const,
      apiKey: undefined,
      store: (r: string) => queueEvents(ctx, [r], n, seq.next),
    },
    {
      subject: SUBJECTS.heraldInboxDevice,
      rows: [row.drainInboxFirst, row.drainInboxSecond] as const,
      apiKey: out.inbox.apiKey,
      // An inbox key's events go through ingress, which keeps them in the inbox store first.
      store: (r: string) => storeThroughIngress(ctx, out.inbox.apiKey, r, n, seq.next),
    },
  ];
  for (const side of sides) {
    ctx.checkDeadline();
    await resetQueue(ctx);
    const recipient = randomUUID();
    await side.store(recipient);
    seq.next += n;
    const devices: Array<[string, PeerRow]> = [
      ['first device', side.rows[0]],
      ['second device', side.rows[1]],
    ];
    for (const [which, peerRow] of devices) {
      const client: HeraldClient = {
        device: `${which.split(' ')[0]}-${randomUUID()}`,
        ...(side.apiKey === undefined ? {} : { apiKey: side.apiKey }),
      };
      const r = await metered(ctx, PROCESSES.herald, () => reconnect(ctx, [recipient], n, client));
      const subject = side.subject(which);
      const rate = r.delivered / ((r.times[0] ?? Number.NaN) / 1000);
      rows.add(metric.oneMetric, subject, 'herald', 'events/s', rate);
      rows.add(metric.oneCpu, subject, 'herald', 'µs', r.cpuPerEventUs);
      countRows(out, 'one', subject, 'herald', r, n);
      peers.add(declare(peers, peerRow), 'herald', rate);
      for (const p of peersOfRun) peers.add(peerRow.label, p.system, p.rate);
      if (peerRow === row.drainFirst) {
        peers.add(declare(peers, row.drainFirstCpu), 'herald', r.cpuPerEventUs, r.split);
        for (const p of peersOfRun) peers.add(row.drainFirstCpu.label, p.system, p.cpuPerEventUs);
      }
      if (r.delivered < n || r.duplicates > 0 || r.outOfOrder > 0 || r.failedConnects > 0)
        notes.push(
          `(a) run ${run + 1}: ${subject}: ${r.delivered} of ${n} delivered within ${ctx.config.drainTimeoutMs / 1000} s, ${r.duplicates} twice, ${r.outOfOrder} out of order${r.firstError ? ` (${r.firstError})` : ''}`,
        );
      line.push(`${side.apiKey ? 'inbox ' : ''}${which} ${formatNumber(rate)}/s`);
    }
  }
  await resetQueue(ctx);
  return line.join(', ');
}

/**
 * Stores `n` events for one offline recipient through `POST /notify/batch` with `apiKey`, batches
 * of BENCH_BATCH_SIZE one after another (so they are stored in the order of their sequence
 * numbers, which the drain's order count reads), every event answered 202; not measured. Throws
 * unless every batch was.
 */
async function storeThroughIngress(
  ctx: BenchContext,
  apiKey: string,
  recipient: string,
  n: number,
  seqBase: number,
): Promise<void> {
  const size = ctx.config.batchSize;
  const requests = Math.ceil(n / size);
  const loop = await closedLoop(
    1,
    { maxCount: requests, durationMs: ctx.config.drainTimeoutMs * 4 },
    async (k) => {
      const events = [];
      for (let i = k * size; i < Math.min(n, (k + 1) * size); i++)
        events.push({ recipient, payloadJson: ctx.payload.make(seqBase + i) });
      const body = notifyBatchBody(ctx.stack, events, apiKey);
      expectBatch(await ctx.http.ingress.post('/notify/batch', body), events.length, 202);
    },
  );
  if (loop.completed !== requests)
    throw new Error(
      `inbox key: stored ${loop.completed} of ${requests} batches (${loop.failed} failed: ${loop.firstError ?? 'time bound reached'})`,
    );
}

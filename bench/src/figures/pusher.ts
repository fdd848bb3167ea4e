import { performance } from 'node:perf_hooks';
import {
  type Check,
  type FigureResult,
  type Ratio,
  RowCollector,
  ratioCheckAtLeast,
  ratioCheckAtMost,
} from '../report/results.js';
import type { BenchContext } from './context.js';
import { connectRun, drainConnectMetrics, drainRun } from './pusher-drain.js';
import { PusherPublish, publishMetrics, SUBJECTS } from './pusher-publish.js';

/** Issue 41's bound: the Pusher door within 10% of `/ws/connect` on each line. */
const RATE_TARGET = 0.9;
const CPU_TARGET = 1.1;

/**
 * Figure 9: the Pusher door (issue 41) beside Herald's own protocol, on the same stack in the same
 * run: online publish (`sendToUser` and `trigger` against `POST /notify`, pusher-publish.ts), a
 * queued user's drain on sign-in and the connect (pusher-drain.ts), each as Pusher ÷ Herald's own,
 * the median of same-run ratios. A Pusher app of the bench's account (its key, `--user-ids uuid`)
 * serves every Pusher side; the load generator signs each request itself (lib/access's signature,
 * no client library) and speaks to the sockets with raw `ws`, as cheaply as to `/ws/connect`.
 */
export async function pusherDoor(ctx: BenchContext): Promise<FigureResult> {
  const started = performance.now();
  const { config } = ctx;
  const rows = new RowCollector('9');
  const notes: string[] = [];
  const app = await ctx.stack.createPusherApp();
  const publish = new PusherPublish(ctx, app, rows, notes);
  const seq = { next: 0 };
  try {
    // Every publish run first with its sockets open; drains and connects need them closed (a
    // queue reset only while no socket is open).
    await publish.setup();
    for (let run = 0; run < config.runs; run++) {
      ctx.checkDeadline();
      ctx.log(`figure 9: publish run ${run + 1}/${config.runs}: ${await publish.run(run)}`);
    }
    await publish.close();
    for (let run = 0; run < config.runs; run++) {
      ctx.checkDeadline();
      const drained = await drainRun(ctx, app, rows, notes, run, seq);
      const connected = await connectRun(ctx, app, rows, notes, run);
      ctx.log(`figure 9: run ${run + 1}/${config.runs}: ${drained}; ${connected}`);
    }
  } finally {
    await publish.close();
  }
  const p = publishMetrics(config.recipients[0] ?? 1);
  const d = drainConnectMetrics(config.drainOne, config.recipients[0] ?? 1);
  const ratio = (label: string, metric: string, pusher: string, herald: string): Ratio =>
    rows.ratio(`${label}: Pusher ÷ Herald's own`, metric, pusher, herald);
  const lines: Array<[Ratio, 'rate' | 'cpu']> = [
    [ratio(`sendToUser ${p.rate}`, p.rate, SUBJECTS.sendToUser, SUBJECTS.notify), 'rate'],
    [ratio(`sendToUser ${p.cpu}`, p.cpu, SUBJECTS.sendToUser, SUBJECTS.notify), 'cpu'],
    [ratio(`trigger ${p.rate}`, p.rate, SUBJECTS.trigger, SUBJECTS.notify), 'rate'],
    [ratio(`trigger ${p.cpu}`, p.cpu, SUBJECTS.trigger, SUBJECTS.notify), 'cpu'],
    [ratio(d.drainRate, d.drainRate, SUBJECTS.drainPusher, SUBJECTS.drainHerald), 'rate'],
    [ratio(d.drainCpu, d.drainCpu, SUBJECTS.drainPusher, SUBJECTS.drainHerald), 'cpu'],
    [ratio(d.connectRate, d.connectRate, SUBJECTS.connectPusher, SUBJECTS.connectHerald), 'rate'],
    [ratio(d.connectCpu, d.connectCpu, SUBJECTS.connectPusher, SUBJECTS.connectHerald), 'cpu'],
  ];
  const checks: Check[] = lines.map(([r, kind]) =>
    kind === 'rate'
      ? ratioCheckAtLeast('9', `${r.label} ≥ ${RATE_TARGET}`, r, RATE_TARGET)
      : ratioCheckAtMost('9', `${r.label} ≤ ${CPU_TARGET}`, r, CPU_TARGET),
  );
  return {
    id: '9',
    title: 'Pusher door',
    rows: rows.rows(),
    checks,
    ratios: lines.map(([r]) => r),
    notes,
    elapsedMs: performance.now() - started,
  };
}

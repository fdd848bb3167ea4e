import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { queueStreamConfig } from '@herald/proto';
import { RAW_STREAM, RAW_SUBJECTS, rawSubject } from '../baselines/names.js';
import { closedLoop } from '../load/pace.js';
import { type FigureResult, RowCollector, ratioAtLeast } from '../report/results.js';
import { type BenchContext, MAX_OPS_PER_SEC } from './context.js';
import { meterCpu, PROCESSES } from './cpu-meter.js';
import { notifyBody } from './herald-wire.js';

export const SUBJECTS = {
  herald: 'Herald POST /notify → 202 (JetStream-acked)',
  raw: 'baseline: nats.js async JetStream publish',
} as const;

/** Offline recipients the events are spread over, well under the per-recipient cap. */
const OFFLINE_RECIPIENTS = 1000;

/**
 * Figure 3: offline dispatch throughput. Herald: POST /notify to recipients nobody connected, each
 * answered 202 only after JetStream acked the store. Baseline: nats.js publishing the same payload
 * to a stream of the same configuration on the same server, with as many publishes in flight as
 * the HTTP client has requests in flight.
 */
export async function offlineThroughput(ctx: BenchContext): Promise<FigureResult> {
  const started = performance.now();
  const { config } = ctx;
  const rows = new RowCollector('3');
  const notes: string[] = [];
  const recipients = Array.from({ length: OFFLINE_RECIPIENTS }, () => randomUUID());
  const queue = queueStreamConfig();
  await ctx.jsm.streams.add({
    ...queue,
    name: RAW_STREAM,
    subjects: [RAW_SUBJECTS],
  } as Parameters<typeof ctx.jsm.streams.add>[0]);
  try {
    const targets = [
      {
        subject: SUBJECTS.herald,
        role: 'herald' as const,
        processes: PROCESSES.herald,
        op: async (i: number) => {
          const r = await ctx.http.ingress.post(
            '/notify',
            notifyBody(
              ctx.stack,
              recipients[i % OFFLINE_RECIPIENTS] as string,
              ctx.payload.make(i),
            ),
          );
          if (r.status !== 202) throw new Error(`HTTP ${r.status}: ${r.text.slice(0, 200)}`);
        },
      },
      {
        subject: SUBJECTS.raw,
        role: 'baseline' as const,
        processes: PROCESSES.nats,
        op: async (i: number) => {
          await ctx.js.publish(
            rawSubject(recipients[i % OFFLINE_RECIPIENTS] as string),
            ctx.payload.make(i),
            {
              expect: { streamName: RAW_STREAM },
            },
          );
        },
      },
    ];
    const measure = async (t: (typeof targets)[number], windowMs: number) => {
      const loop = await closedLoop(
        config.concurrency,
        { durationMs: windowMs, maxCount: (windowMs / 1000) * MAX_OPS_PER_SEC },
        t.op,
      );
      return loop;
    };
    for (const t of targets) await measure(t, Math.min(300, config.measureMs));
    for (let run = 0; run < config.runs; run++) {
      ctx.checkDeadline();
      const line: string[] = [];
      for (const t of targets) {
        await ctx.http.ingress.warm();
        const { result: loop, cpuSeconds } = await meterCpu(ctx.servers, t.processes, () =>
          measure(t, config.measureMs),
        );
        const rate = loop.completed / (loop.elapsedMs / 1000);
        rows.add('events/s stored', t.subject, t.role, 'events/s', rate);
        rows.add(
          'server CPU per stored event',
          t.subject,
          t.role,
          'µs',
          (1e6 * cpuSeconds) / loop.completed,
        );
        line.push(`${t.subject.replace('baseline: ', '')} ${Math.round(rate)}`);
        if (loop.failed > 0)
          notes.push(`${t.subject}, run ${run + 1}: ${loop.failed} failed: ${loop.firstError}`);
      }
      ctx.log(`figure 3: run ${run + 1}/${config.runs}: ${line.join(', ')}`);
    }
  } finally {
    await ctx.jsm.streams.delete(RAW_STREAM).catch(() => false);
  }
  return {
    id: '3',
    title: 'Offline dispatch throughput (stored and acked)',
    rows: rows.rows(),
    checks: [
      ratioAtLeast(
        '3',
        'Herald ≥ 0.7× raw JetStream publish',
        rows.median('events/s stored', SUBJECTS.herald),
        rows.median('events/s stored', SUBJECTS.raw),
        0.7,
      ),
    ],
    notes,
    elapsedMs: performance.now() - started,
  };
}

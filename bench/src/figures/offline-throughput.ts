import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { queueStreamConfig } from '@herald/queue';
import {
  KOA_STREAM,
  KOA_SUBJECTS,
  RAW_STREAM,
  RAW_SUBJECTS,
  rawSubject,
} from '../baselines/names.js';
import { closedLoop } from '../load/pace.js';
import { type FigureResult, RowCollector, ratioCheckAtLeast } from '../report/results.js';
import { type BenchContext, MAX_OPS_PER_SEC } from './context.js';
import { meterCpu, PROCESSES } from './cpu-meter.js';
import { expectBatch, notifyBatchBody, notifyBody } from './herald-wire.js';

export const SUBJECTS = {
  herald: 'Herald POST /notify → 202 (JetStream-acked)',
  heraldBatch: 'Herald POST /notify/batch → 202 each (JetStream-acked)',
  koa: 'baseline: koa + zod + nats.js POST /notify → 202 (JetStream-acked)',
  raw: 'baseline: nats.js async JetStream publish (floor)',
} as const;

/** Offline recipients the events are spread over, well under the per-recipient cap. */
const OFFLINE_RECIPIENTS = 1000;

/**
 * Figure 3: offline dispatch throughput. Herald: POST /notify to recipients nobody connected, each
 * answered 202 only after JetStream acked the store, and POST /notify/batch with `batchSize`
 * such events per request. Baselines: the minimal koa + zod + nats.js service a team would write
 * instead (the same HTTP load, the same body), and the floor: nats.js publishing the same payload
 * from the load generator to a stream of the same configuration on the same server, with as many
 * publishes in flight as the HTTP client has requests in flight.
 */
export async function offlineThroughput(ctx: BenchContext): Promise<FigureResult> {
  const started = performance.now();
  const { config } = ctx;
  const rows = new RowCollector('3');
  const notes: string[] = [];
  const recipients = Array.from({ length: OFFLINE_RECIPIENTS }, () => randomUUID());
  const queue = queueStreamConfig();
  for (const [name, subject] of [
    [RAW_STREAM, RAW_SUBJECTS],
    [KOA_STREAM, KOA_SUBJECTS],
  ]) {
    await ctx.jsm.streams.add({
      ...queue,
      name,
      subjects: [subject],
    } as Parameters<typeof ctx.jsm.streams.add>[0]);
  }
  const batch = config.batchSize;
  const batchOf = (i: number) =>
    notifyBatchBody(
      ctx.stack,
      Array.from({ length: batch }, (_, k) => ({
        recipient: recipients[(i * batch + k) % OFFLINE_RECIPIENTS] as string,
        payloadJson: ctx.payload.make(i * batch + k),
      })),
    );
  try {
    const targets = [
      {
        subject: SUBJECTS.herald,
        role: 'herald' as const,
        processes: PROCESSES.herald,
        http: ctx.http.ingress,
        events: 1,
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
        subject: SUBJECTS.heraldBatch,
        role: 'herald' as const,
        processes: PROCESSES.herald,
        http: ctx.http.ingress,
        events: batch,
        op: async (i: number) => {
          expectBatch(await ctx.http.ingress.post('/notify/batch', batchOf(i)), batch, 202);
        },
      },
      {
        subject: SUBJECTS.koa,
        role: 'baseline' as const,
        processes: PROCESSES.koaJetStream,
        http: ctx.http.koaJetStream,
        events: 1,
        op: async (i: number) => {
          const r = await ctx.http.koaJetStream.post(
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
        events: 1,
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
    for (const t of targets) if (config.warmupMs > 0) await measure(t, config.warmupMs);
    for (let run = 0; run < config.runs; run++) {
      ctx.checkDeadline();
      const line: string[] = [];
      for (const t of targets) {
        await t.http?.warm();
        const { result: loop, cpuSeconds } = await meterCpu(ctx.servers, t.processes, () =>
          measure(t, config.measureMs),
        );
        const stored = loop.completed * t.events;
        const rate = stored / (loop.elapsedMs / 1000);
        rows.add('events/s stored', t.subject, t.role, 'events/s', rate);
        rows.add(
          'server CPU per stored event',
          t.subject,
          t.role,
          'µs',
          (1e6 * cpuSeconds) / stored,
        );
        line.push(`${t.subject.replace('baseline: ', '')} ${Math.round(rate)}`);
        if (loop.failed > 0)
          notes.push(`${t.subject}, run ${run + 1}: ${loop.failed} failed: ${loop.firstError}`);
      }
      ctx.log(`figure 3: run ${run + 1}/${config.runs}: ${line.join(', ')}`);
    }
  } finally {
    for (const name of [RAW_STREAM, KOA_STREAM]) {
      await ctx.jsm.streams.delete(name).catch(() => false);
    }
  }
  const ratio = (label: string, herald: string, baseline: string) =>
    rows.ratio(label, 'events/s stored', herald, baseline);
  const vsKoa = ratio('POST /notify ÷ koa + JetStream service', SUBJECTS.herald, SUBJECTS.koa);
  const batchVsRaw = ratio(`batch of ${batch} ÷ raw publish`, SUBJECTS.heraldBatch, SUBJECTS.raw);
  return {
    id: '3',
    title: 'Offline dispatch throughput (stored and acked)',
    rows: rows.rows(),
    checks: [
      ratioCheckAtLeast('3', 'POST /notify: Herald ≥ 0.8× the koa + JetStream service', vsKoa, 0.8),
      ratioCheckAtLeast(
        '3',
        `batch of ${batch}: Herald ≥ 0.5× the raw async publish`,
        batchVsRaw,
        0.5,
      ),
    ],
    ratios: [
      vsKoa,
      ratio('POST /notify ÷ raw publish (floor)', SUBJECTS.herald, SUBJECTS.raw),
      ratio('koa + JetStream service ÷ raw publish (floor)', SUBJECTS.koa, SUBJECTS.raw),
      batchVsRaw,
      ratio(`batch of ${batch} ÷ koa + JetStream service`, SUBJECTS.heraldBatch, SUBJECTS.koa),
    ],
    notes,
    elapsedMs: performance.now() - started,
  };
}

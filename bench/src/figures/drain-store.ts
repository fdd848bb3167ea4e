import { readFile } from 'node:fs/promises';
import type { Poster } from '../load/http-poster.js';
import { closedLoop } from '../load/pace.js';
import { batchBody, expectBatchPublished } from './centrifugo-wire.js';
import type { BenchContext, CentrifugoPeer } from './context.js';
import { meterCpu, perUnitUs } from './cpu-meter.js';
import type { DrainOutcome } from './drain-storm.js';

/* Figure 4's store side: Herald's, the floor's and Centrifugo's stores, metered. */

/** nats-server's resident memory, bytes (/proc VmRSS); undefined when it cannot be read. */
export async function natsRssBytes(ctx: BenchContext): Promise<number | undefined> {
  const nats = ctx.servers.find((p) => p.name === 'nats-server');
  if (!nats) return undefined;
  try {
    const status = await readFile(`/proc/${nats.pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

/**
 * Runs a drain with the named server processes' CPU metered: per delivered event, the server
 * core's cost (every Herald process for Herald; nats-server for the raw replay, whose client runs
 * on the load generator's core), and for Herald the same split by process.
 */
export async function metered(
  ctx: BenchContext,
  processes: readonly string[],
  work: () => Promise<DrainOutcome>,
): Promise<DrainOutcome & { cpuPerEventUs: number; split: Record<string, number> }> {
  const { result, cpuSeconds, perProcess } = await meterCpu(ctx.servers, processes, work);
  return {
    ...result,
    cpuPerEventUs: (1e6 * cpuSeconds) / result.delivered,
    split: perUnitUs(perProcess, result.delivered),
  };
}

export interface StoreOutcome {
  rate: number;
  stored: number;
  cpuPerEventUs: number;
  split: Record<string, number>;
  firstError?: string;
}

/**
 * Stores `n` events for one offline recipient through a system's own API, `concurrency` requests
 * in flight, each answered `want` (202 stored, or 200 for Centrifugo's publish into history).
 */
export async function storeOne(
  ctx: BenchContext,
  processes: readonly string[],
  http: Poster,
  n: number,
  want: number,
  request: (i: number) => [path: string, body: string],
): Promise<StoreOutcome> {
  await http.warm();
  const {
    result: loop,
    cpuSeconds,
    perProcess,
  } = await meterCpu(ctx.servers, processes, () =>
    closedLoop(
      ctx.config.concurrency,
      { maxCount: n, durationMs: ctx.config.drainTimeoutMs * 4 },
      async (i) => {
        const [path, body] = request(i);
        const r = await http.post(path, body);
        if (r.status !== want || r.text.includes('"error"'))
          throw new Error(`HTTP ${r.status}: ${r.text.slice(0, 200)}`);
      },
    ),
  );
  const stored = Math.max(1, loop.completed);
  return {
    rate: loop.completed / (loop.elapsedMs / 1000),
    stored: loop.completed,
    cpuPerEventUs: (1e6 * cpuSeconds) / stored,
    split: perUnitUs(perProcess, stored),
    ...(loop.firstError === undefined ? {} : { firstError: loop.firstError }),
  };
}

/**
 * Publishes `each` events to every recipient's personal channel through `POST /api/batch`, a
 * batch of up to BENCH_BATCH_SIZE commands per request, round-robin as figure 4b's queues are
 * filled for Herald; not measured. Throws unless every event was accepted.
 */
export async function publishMany(
  ctx: BenchContext,
  peer: CentrifugoPeer,
  recipients: readonly string[],
  each: number,
  seqBase: number,
): Promise<void> {
  const total = recipients.length * each;
  const size = ctx.config.batchSize;
  const requests = Math.ceil(total / size);
  const loop = await closedLoop(
    ctx.config.concurrency,
    { maxCount: requests, durationMs: ctx.config.drainTimeoutMs * 4 },
    async (k) => {
      const events = [];
      for (let i = k * size; i < Math.min(total, (k + 1) * size); i++)
        events.push({
          recipient: recipients[i % recipients.length] as string,
          payloadJson: ctx.payload.make(seqBase + i),
        });
      expectBatchPublished(await peer.api.post('/api/batch', batchBody(events)), events.length);
    },
  );
  if (loop.completed !== requests)
    throw new Error(
      `${peer.server.name}: published ${loop.completed} of ${requests} batches (${loop.failed} failed: ${loop.firstError ?? 'time bound reached'})`,
    );
}

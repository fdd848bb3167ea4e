import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { QUEUE_STREAM, SUBPROTOCOL, subjects } from '@herald/proto';
import type { Consumer } from 'nats';
import { waitUntil } from '../load/pace.js';
import { WsFleet } from '../load/ws-fleet.js';
import {
  type FigureResult,
  formatNumber,
  RowCollector,
  ratioAtLeast,
  valueCheck,
} from '../report/results.js';
import { percentile } from '../stats.js';
import { type BenchContext, HANDSHAKE_TIMEOUT_MS } from './context.js';
import { connectUrl } from './herald-wire.js';
import { queueEvents, resetQueue } from './queue-prep.js';

export const SUBJECTS = {
  herald: 'Herald socket-edge (herald.v1, client acks)',
  raw: 'baseline: nats.js ordered-consumer replay',
} as const;

/** Tracks one recipient's drain: distinct event ids seen and when the last expected one came. */
interface Drain {
  ids: Set<string>;
  doneAt: number;
}

/**
 * Figure 4: draining queued events on reconnect, through Herald's herald.v1 framing (what the SDK
 * speaks: every event acked by the client) against a raw ordered consumer replaying the same
 * stored messages. (a) one recipient with a deep queue; (b) many recipients reconnecting at once.
 */
export async function drain(ctx: BenchContext): Promise<FigureResult> {
  const started = performance.now();
  const { config } = ctx;
  const rows = new RowCollector('4');
  const notes: string[] = [];
  let seqBase = 0;
  const n = config.drainOne;
  const m = config.drainMany;
  const each = config.drainEach;
  const oneMetric = `(a) events/s, 1 recipient × ${n.toLocaleString('en-US')} queued`;
  const manyP50 = `(b) p50 time to caught up, ${m.toLocaleString('en-US')} × ${each}`;
  const manyP99 = `(b) p99 time to caught up, ${m.toLocaleString('en-US')} × ${each}`;
  const manyDelivered = `(b) delivered / expected, ${m.toLocaleString('en-US')} × ${each}`;

  // Figure 3 left its offline events in the stream; every run starts from an empty queue.
  await resetQueue(ctx);
  for (let run = 0; run < config.runs; run++) {
    ctx.checkDeadline();
    // (a) one deep queue.
    const one = randomUUID();
    await queueEvents(ctx, [one], n, seqBase);
    seqBase += n;
    const rawOne = await replay(ctx, [one], n);
    const rawRate = rawOne.delivered / ((rawOne.times[0] ?? Number.NaN) / 1000);
    rows.add(oneMetric, SUBJECTS.raw, 'baseline', 'events/s', rawRate);
    const heraldOne = await reconnect(ctx, [one], n);
    const heraldRate = heraldOne.delivered / ((heraldOne.times[0] ?? Number.NaN) / 1000);
    rows.add(oneMetric, SUBJECTS.herald, 'herald', 'events/s', heraldRate);
    if (heraldOne.delivered < n)
      notes.push(
        `(a) run ${run + 1}: Herald delivered ${heraldOne.delivered} of ${n} within ${config.drainTimeoutMs / 1000} s`,
      );
    await resetQueue(ctx);

    // (b) many recipients at once.
    const many = Array.from({ length: m }, () => randomUUID());
    const phases: string[] = [];
    let t = performance.now();
    const phase = (name: string) => {
      phases.push(`${name} ${((performance.now() - t) / 1000).toFixed(1)} s`);
      t = performance.now();
    };
    await queueEvents(ctx, many, each, seqBase);
    seqBase += m * each;
    phase('queue');
    const rawMany = await replay(ctx, many, each);
    phase('raw replay');
    const heraldMany = await reconnect(ctx, many, each);
    phase('Herald drain');
    for (const [subject, role, r] of [
      [SUBJECTS.raw, 'baseline', rawMany],
      [SUBJECTS.herald, 'herald', heraldMany],
    ] as const) {
      rows.add(manyP50, subject, role, 'ms', percentile(r.times, 50));
      rows.add(manyP99, subject, role, 'ms', percentile(r.times, 99));
      rows.add(manyDelivered, subject, role, '%', (100 * r.delivered) / (m * each));
    }
    if (heraldMany.failedConnects > 0)
      notes.push(
        `(b) run ${run + 1}: ${heraldMany.failedConnects} of ${m} Herald connects failed (${heraldMany.firstError})`,
      );
    await resetQueue(ctx);
    phase('cleanup');
    ctx.log(
      `figure 4: run ${run + 1}/${config.runs}: (a) Herald ${formatNumber(heraldRate)}/s vs raw ${formatNumber(rawRate)}/s; (b) Herald p99 ${formatNumber(percentile(heraldMany.times, 99))} ms, ${heraldMany.delivered}/${m * each} delivered (${phases.join(', ')})`,
    );
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
    notes,
    elapsedMs: performance.now() - started,
  };
}

interface DrainOutcome {
  /** Per recipient: ms from the start until its last expected event (the time bound if it never came). */
  times: number[];
  delivered: number;
  failedConnects: number;
  firstError?: string;
}

/** Opens one herald.v1 socket per recipient, all at once, acking every event as the SDK does. */
async function reconnect(
  ctx: BenchContext,
  recipients: string[],
  each: number,
): Promise<DrainOutcome> {
  const drains: Drain[] = recipients.map(() => ({
    ids: new Set(),
    doneAt: Number.POSITIVE_INFINITY,
  }));
  let complete = 0;
  let delivered = 0;
  const fleet = new WsFleet({
    url: (i) => connectUrl(ctx.stack, recipients[i] as string),
    protocols: [SUBPROTOCOL],
    tls: ctx.tls,
    addresses: ctx.addresses,
    concurrency: recipients.length,
    handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
    onMessage: (i, data, ws) => {
      const frame = JSON.parse(data.toString('utf8')) as { type: string; id: string };
      if (frame.type !== 'event') return;
      ws.send(`{"type":"ack","id":${JSON.stringify(frame.id)}}`);
      const d = drains[i] as Drain;
      if (d.ids.has(frame.id)) return;
      d.ids.add(frame.id);
      delivered++;
      if (d.ids.size === each) {
        d.doneAt = performance.now();
        complete++;
      }
    },
  });
  const start = performance.now();
  try {
    const out = await fleet.grow(recipients.length);
    await waitUntil(
      () => complete === recipients.length,
      ctx.config.drainTimeoutMs - (performance.now() - start),
      5,
    );
    return {
      // A recipient that never caught up counts as the whole time bound (a censored sample).
      times: drains.map((d) => Math.min(d.doneAt - start, ctx.config.drainTimeoutMs)),
      delivered,
      failedConnects: out.failed,
      ...(out.firstError === undefined ? {} : { firstError: out.firstError }),
    };
  } finally {
    await fleet.close();
  }
}

/** Replays each recipient's stored messages with its own ordered consumer, all at once. */
async function replay(
  ctx: BenchContext,
  recipients: string[],
  each: number,
): Promise<DrainOutcome> {
  const start = performance.now();
  let delivered = 0;
  const times = await Promise.all(
    recipients.map(async (r) => {
      let consumer: Consumer | undefined;
      try {
        consumer = await ctx.js.consumers.get(QUEUE_STREAM, {
          filterSubjects: subjects.queue(ctx.stack.account, r),
        });
        const messages = await consumer.consume({ max_messages: Math.min(each, 1000) });
        let got = 0;
        const timer = setTimeout(() => messages.stop(), ctx.config.drainTimeoutMs);
        for await (const _m of messages) {
          delivered++;
          if (++got === each) break;
        }
        clearTimeout(timer);
        return got === each ? performance.now() - start : ctx.config.drainTimeoutMs;
      } finally {
        await consumer?.delete().catch(() => false);
      }
    }),
  );
  return { times, delivered, failedConnects: 0 };
}

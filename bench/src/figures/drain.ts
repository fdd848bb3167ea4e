import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { SUBPROTOCOL, subjects } from '@herald/proto';
import type { Consumer } from 'nats';
import type { WebSocket } from 'ws';
import { waitUntil } from '../load/pace.js';
import { WsFleet } from '../load/ws-fleet.js';
import { seqOf } from '../payload.js';
import {
  type FigureResult,
  formatNumber,
  RowCollector,
  ratioAtLeast,
  valueCheck,
} from '../report/results.js';
import { percentile } from '../stats.js';
import { type BenchContext, HANDSHAKE_TIMEOUT_MS } from './context.js';
import { meterCpu, PROCESSES } from './cpu-meter.js';
import { connectUrl, rawWsUrl } from './herald-wire.js';
import { queueEvents, queueLayout, resetQueue } from './queue-prep.js';

export const SUBJECTS = {
  herald: 'Herald socket-edge (herald.v1, client acks)',
  raw: 'baseline: nats.js ordered-consumer replay',
  /** (b)'s sockets alone: the same load generator opening as many TLS WebSockets at once. */
  connects: 'baseline: raw ws server, the same connects (no events)',
  /** DESIGN.md's drain with none of Herald's work: raw ws sockets, a durable consumer each. */
  floor: 'baseline: design floor, raw ws + durable consumer, acked on write',
} as const;

/** Tracks one recipient's drain: distinct event ids seen and when the last expected one came. */
interface Drain {
  ids: Set<string>;
  doneAt: number;
  /** When its socket opened; infinite if it never did. */
  openAt: number;
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
  const natsCpu = '(b) nats-server CPU per queued recipient, Herald drain';
  const natsRss = '(b) nats-server RSS growth per queued recipient (events + consumer)';
  const oneCpu = '(a) server CPU per delivered event';
  const manyCpu = '(b) server CPU per delivered event';
  const openP50 = `(b) p50 time to socket open, ${m.toLocaleString('en-US')} × ${each}`;
  const openP99 = `(b) p99 time to socket open, ${m.toLocaleString('en-US')} × ${each}`;
  const afterOpenP99 = `(b) p99 time from socket open to caught up, ${m.toLocaleString('en-US')} × ${each}`;

  // Figure 3 left its offline events in the stream; every run starts from an empty queue.
  await resetQueue(ctx);
  for (let run = 0; run < config.runs; run++) {
    ctx.checkDeadline();
    // (a) one deep queue.
    const one = randomUUID();
    await queueEvents(ctx, [one], n, seqBase);
    seqBase += n;
    const rawOne = await metered(ctx, PROCESSES.nats, () => replay(ctx, [one], n));
    const rawRate = rawOne.delivered / ((rawOne.times[0] ?? Number.NaN) / 1000);
    rows.add(oneMetric, SUBJECTS.raw, 'baseline', 'events/s', rawRate);
    rows.add(oneCpu, SUBJECTS.raw, 'baseline', 'µs', rawOne.cpuPerEventUs);
    const heraldOne = await metered(ctx, PROCESSES.edge, () => reconnect(ctx, [one], n));
    const heraldRate = heraldOne.delivered / ((heraldOne.times[0] ?? Number.NaN) / 1000);
    rows.add(oneMetric, SUBJECTS.herald, 'herald', 'events/s', heraldRate);
    rows.add(oneCpu, SUBJECTS.herald, 'herald', 'µs', heraldOne.cpuPerEventUs);
    if (heraldOne.delivered < n)
      notes.push(
        `(a) run ${run + 1}: Herald delivered ${heraldOne.delivered} of ${n} within ${config.drainTimeoutMs / 1000} s`,
      );
    // The design floor reads the same stored events through a durable consumer of its own (the
    // stream keeps acked events until retention deletes them).
    const floorOne = await metered(ctx, PROCESSES.floorDrain, () => floorReconnect(ctx, [one], n));
    const floorRate = floorOne.delivered / ((floorOne.times[0] ?? Number.NaN) / 1000);
    rows.add(oneMetric, SUBJECTS.floor, 'baseline', 'events/s', floorRate);
    rows.add(oneCpu, SUBJECTS.floor, 'baseline', 'µs', floorOne.cpuPerEventUs);
    await resetQueue(ctx);

    // (b) many recipients at once.
    const many = Array.from({ length: m }, () => randomUUID());
    const phases: string[] = [];
    let t = performance.now();
    const phase = (name: string) => {
      phases.push(`${name} ${((performance.now() - t) / 1000).toFixed(1)} s`);
      t = performance.now();
    };
    const rssBefore = await natsRssBytes(ctx);
    await queueEvents(ctx, many, each, seqBase);
    seqBase += m * each;
    phase('queue');
    const rawMany = await metered(ctx, PROCESSES.nats, () => replay(ctx, many, each));
    phase('raw replay');
    const rawOpens = await connectStorm(ctx, many);
    phase('raw ws connects');
    // Herald's drain metered twice over: every server process (CPU per delivered event) and
    // nats-server alone (its cost per queued recipient).
    const { result: heraldMany, cpuSeconds } = await meterCpu(ctx.servers, PROCESSES.nats, () =>
      metered(ctx, PROCESSES.edge, () => reconnect(ctx, many, each)),
    );
    phase('Herald drain');
    // With every recipient's events stored and its durable consumer created (the state a storm
    // leaves until retention's run): what nats-server holds per recipient.
    const rssAfter = await natsRssBytes(ctx);
    // The design floor's storm on the same events, after Herald's consumers are gone, so
    // nats-server holds one consumer per recipient for it as it did for Herald.
    await resetQueue(ctx);
    await queueEvents(ctx, many, each, seqBase);
    seqBase += m * each;
    phase('queue again');
    const floorMany = await metered(ctx, PROCESSES.floorDrain, () =>
      floorReconnect(ctx, many, each),
    );
    phase('design floor drain');
    rows.add(natsCpu, SUBJECTS.herald, 'herald', 'ms', (1000 * cpuSeconds) / m);
    if (rssBefore !== undefined && rssAfter !== undefined)
      rows.add(natsRss, SUBJECTS.herald, 'herald', 'KB', (rssAfter - rssBefore) / 1024 / m);
    for (const [subject, role, r] of [
      [SUBJECTS.raw, 'baseline', rawMany],
      [SUBJECTS.herald, 'herald', heraldMany],
      [SUBJECTS.floor, 'baseline', floorMany],
    ] as const) {
      rows.add(manyP50, subject, role, 'ms', percentile(r.times, 50));
      rows.add(manyP99, subject, role, 'ms', percentile(r.times, 99));
      rows.add(manyDelivered, subject, role, '%', (100 * r.delivered) / (m * each));
      rows.add(manyCpu, subject, role, 'µs', r.cpuPerEventUs);
    }
    for (const [subject, role, r] of [
      [SUBJECTS.herald, 'herald', heraldMany],
      [SUBJECTS.floor, 'baseline', floorMany],
    ] as const) {
      if (r.openTimes) {
        rows.add(openP50, subject, role, 'ms', percentile(r.openTimes, 50));
        rows.add(openP99, subject, role, 'ms', percentile(r.openTimes, 99));
      }
      if (r.afterOpenTimes)
        rows.add(afterOpenP99, subject, role, 'ms', percentile(r.afterOpenTimes, 99));
      if (r.failedConnects > 0)
        notes.push(
          `(b) run ${run + 1}: ${r.failedConnects} of ${m} ${subject} connects failed (${r.firstError})`,
        );
    }
    rows.add(openP50, SUBJECTS.connects, 'baseline', 'ms', percentile(rawOpens, 50));
    rows.add(openP99, SUBJECTS.connects, 'baseline', 'ms', percentile(rawOpens, 99));
    await resetQueue(ctx);
    phase('cleanup');
    ctx.log(
      `figure 4: run ${run + 1}/${config.runs}: (a) Herald ${formatNumber(heraldRate)}/s vs raw ${formatNumber(rawRate)}/s, design floor ${formatNumber(floorRate)}/s; (b) Herald p99 ${formatNumber(percentile(heraldMany.times, 99))} ms, ${heraldMany.delivered}/${m * each} delivered, design floor p99 ${formatNumber(percentile(floorMany.times, 99))} ms (${phases.join(', ')})`,
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
    ratios: [
      rows.ratio(`${oneMetric}: Herald ÷ raw replay`, oneMetric, SUBJECTS.herald, SUBJECTS.raw),
      rows.ratio(
        `${oneMetric}: design floor ÷ raw replay`,
        oneMetric,
        SUBJECTS.floor,
        SUBJECTS.raw,
      ),
      rows.ratio(`${oneMetric}: Herald ÷ design floor`, oneMetric, SUBJECTS.herald, SUBJECTS.floor),
    ],
    notes,
    elapsedMs: performance.now() - started,
  };
}

/** nats-server's resident memory, bytes (/proc VmRSS); undefined when it cannot be read. */
async function natsRssBytes(ctx: BenchContext): Promise<number | undefined> {
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
 * core's cost (socket-edge, nats-server and auth for Herald; nats-server for the raw replay, whose
 * client runs on the load generator's core).
 */
async function metered(
  ctx: BenchContext,
  processes: readonly string[],
  work: () => Promise<DrainOutcome>,
): Promise<DrainOutcome & { cpuPerEventUs: number }> {
  const { result, cpuSeconds } = await meterCpu(ctx.servers, processes, work);
  return { ...result, cpuPerEventUs: (1e6 * cpuSeconds) / result.delivered };
}

interface DrainOutcome {
  /** Per recipient: ms from the start until its last expected event (the time bound if it never came). */
  times: number[];
  /** Per recipient: ms from the start until its socket opened (Herald only). */
  openTimes?: number[];
  /** Per opened socket: ms from its open until its last expected event, or until the time bound. */
  afterOpenTimes?: number[];
  delivered: number;
  failedConnects: number;
  firstError?: string;
}

/** How (b)'s sockets are opened, Herald's and the connect-only baseline's alike. */
function stormSettings(ctx: BenchContext, sockets: number) {
  return {
    tls: ctx.tls,
    addresses: ctx.addresses,
    concurrency: Math.min(sockets, ctx.config.drainConnectConcurrency),
    handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
  };
}

/** Opens one herald.v1 socket per recipient, all at once, acking every event as the SDK does. */
function reconnect(ctx: BenchContext, recipients: string[], each: number): Promise<DrainOutcome> {
  return storm(ctx, recipients, each, {
    url: (r) => connectUrl(ctx.stack, r),
    protocols: [SUBPROTOCOL],
    eventId: (data, ws) => {
      const frame = JSON.parse(data.toString('utf8')) as { type: string; id: string };
      if (frame.type !== 'event') return undefined;
      ws.send(`{"type":"ack","id":${JSON.stringify(frame.id)}}`);
      return frame.id;
    },
  });
}

/**
 * The same storm against the design floor: one raw ws socket per recipient, whose server drains
 * the recipient's stored events from a durable consumer of its own (raw-ws-server.ts, drainQueue).
 * The frames are the bare payloads; an event is told apart by its sequence number.
 */
function floorReconnect(
  ctx: BenchContext,
  recipients: string[],
  each: number,
): Promise<DrainOutcome> {
  return storm(ctx, recipients, each, {
    url: (r) => {
      const q = new URLSearchParams({
        stream: queueLayout.streamOf(ctx.stack.account, r),
        subject: subjects.queue(ctx.stack.account, r),
      });
      return `${rawWsUrl(ctx.baselines.rawWsOrigin, r)}&${q}`;
    },
    eventId: (data) => {
      const seq = seqOf(data.toString('utf8'));
      return seq < 0 ? undefined : String(seq);
    },
  });
}

/**
 * Opens one socket per recipient, all at once, and times each recipient until `each` distinct
 * events (by `eventId`, which also answers the frame as the client must) have arrived.
 */
async function storm(
  ctx: BenchContext,
  recipients: string[],
  each: number,
  client: {
    url: (recipient: string) => string;
    protocols?: string[];
    eventId: (data: Buffer, ws: WebSocket) => string | undefined;
  },
): Promise<DrainOutcome> {
  const drains: Drain[] = recipients.map(() => ({
    ids: new Set(),
    doneAt: Number.POSITIVE_INFINITY,
    openAt: Number.POSITIVE_INFINITY,
  }));
  let complete = 0;
  let delivered = 0;
  const fleet = new WsFleet({
    url: (i) => client.url(recipients[i] as string),
    ...(client.protocols ? { protocols: client.protocols } : {}),
    ...stormSettings(ctx, recipients.length),
    onOpen: (i) => {
      (drains[i] as Drain).openAt = performance.now();
    },
    onMessage: (i, data, ws) => {
      const id = client.eventId(data, ws);
      if (id === undefined) return;
      const d = drains[i] as Drain;
      if (d.ids.has(id)) return;
      d.ids.add(id);
      // Only what arrived within the time bound counts (the fleet may still be opening sockets
      // past it: before, events of the late sockets were counted too).
      if (performance.now() - start <= ctx.config.drainTimeoutMs) delivered++;
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
      // The same, split at the socket's open: the handshake, then the drain itself.
      openTimes: drains.map((d) => Math.min(d.openAt - start, ctx.config.drainTimeoutMs)),
      afterOpenTimes: drains
        .filter((d) => d.openAt - start < ctx.config.drainTimeoutMs)
        .map((d) => Math.min(d.doneAt, start + ctx.config.drainTimeoutMs) - d.openAt),
      delivered,
      failedConnects: out.failed,
      ...(out.firstError === undefined ? {} : { firstError: out.firstError }),
    };
  } finally {
    await fleet.close();
  }
}

/**
 * (b)'s connects without Herald: one TLS WebSocket per recipient to the raw ws baseline, all at
 * once, through the same fleet settings. Per socket, ms from the start until it opened (the time
 * bound if it never did): what the load generator and TLS alone cost the storm on this machine.
 */
async function connectStorm(ctx: BenchContext, recipients: string[]): Promise<number[]> {
  const bound = ctx.config.drainTimeoutMs;
  const openAt = recipients.map(() => Number.POSITIVE_INFINITY);
  const fleet = new WsFleet({
    url: (i) => rawWsUrl(ctx.baselines.rawWsOrigin, recipients[i] as string),
    ...stormSettings(ctx, recipients.length),
    onOpen: (i) => {
      openAt[i] = performance.now();
    },
  });
  const start = performance.now();
  try {
    await fleet.grow(recipients.length);
    return openAt.map((t) => Math.min(t - start, bound));
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
        consumer = await ctx.js.consumers.get(queueLayout.streamOf(ctx.stack.account, r), {
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

import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { SUBPROTOCOL, subjects } from '@herald/proto';
import { queueStreamConfig } from '@herald/queue';
import type { Consumer } from 'nats';
import { KOA_STREAM, KOA_SUBJECTS, koaSubject } from '../baselines/names.js';
import { centrifugoFleet } from '../load/centrifugo-fleet.js';
import type { Poster } from '../load/http-poster.js';
import { closedLoop, waitUntil } from '../load/pace.js';
import { WsFleet } from '../load/ws-fleet.js';
import { seqOf, seqOfValue } from '../payload.js';
import { declare, PeerCollector, peerRows, type System } from '../report/peers.js';
import {
  type FigureResult,
  formatNumber,
  RowCollector,
  ratioAtLeast,
  valueCheck,
} from '../report/results.js';
import { percentile } from '../stats.js';
import { batchBody, expectBatchPublished, publishBody } from './centrifugo-wire.js';
import { type BenchContext, type CentrifugoPeer, HANDSHAKE_TIMEOUT_MS } from './context.js';
import {
  centrifugoProcesses,
  centrifugoSystem,
  meterCpu,
  PROCESSES,
  perUnitUs,
} from './cpu-meter.js';
import { connectUrl, notifyBody, rawWsUrl } from './herald-wire.js';
import { queueEvents, queueLayout, resetQueue } from './queue-prep.js';

export const SUBJECTS = {
  herald: 'Herald socket-edge (herald.v1, client acks)',
  raw: 'baseline: nats.js ordered-consumer replay',
  /** (b)'s sockets alone: the same load generator opening as many TLS WebSockets at once. */
  connects: 'baseline: raw ws server, the same connects (no events)',
  /** DESIGN.md's drain with none of Herald's work: raw ws sockets, a durable consumer each. */
  floor: 'baseline: design floor, raw ws + durable consumer, acked on write',
  /** Herald's store: `POST /notify` to a recipient nobody connected, each answered 202. */
  heraldStore: 'Herald POST /notify → 202 (stored)',
  /** The floor's store: the koa + zod + nats.js service of figure 3. */
  floorStore: 'baseline: design floor, koa + JetStream POST /notify → 202',
  centrifugo: (engine: string) => `baseline: Centrifugo (${engine} engine), connect with recover`,
  centrifugoStore: (engine: string) =>
    `baseline: Centrifugo (${engine} engine) POST /api/publish (history)`,
} as const;

const systemOf = (peer: CentrifugoPeer): System => centrifugoSystem(peer.engine);
const processesOf = (peer: CentrifugoPeer) => centrifugoProcesses(peer.engine);

const NO_STORE =
  'Socket.IO and the raw ws server keep nothing for an absent recipient, so they have no value here';

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
  const peers = new PeerCollector('4');
  const row = peerRows(config);
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

  const storeMetric = `(a) events/s stored, 1 recipient × ${n.toLocaleString('en-US')}`;
  const storeCpu = '(a) server CPU per stored event';
  // Figure 3 left its offline events in the stream; every run starts from an empty queue. The
  // design floor stores into figure 3's koa stream (its configuration is the queue's).
  await resetQueue(ctx);
  await ctx.jsm.streams.add({
    ...queueStreamConfig(),
    name: KOA_STREAM,
    subjects: [KOA_SUBJECTS],
  } as Parameters<typeof ctx.jsm.streams.add>[0]);
  try {
    for (let run = 0; run < config.runs; run++) {
      ctx.checkDeadline();
      // (a) one deep queue, stored through each system's own API (issue 31's store row), then
      // drained on connect.
      const one = randomUUID();
      const storeRow = (
        subject: string,
        role: 'herald' | 'baseline',
        system: System,
        out: StoreOutcome,
      ) => {
        rows.add(storeMetric, subject, role, 'events/s', out.rate);
        rows.add(storeCpu, subject, role, 'µs', out.cpuPerEventUs);
        peers.add(declare(peers, row.store, NO_STORE), system, out.rate);
        peers.add(declare(peers, row.storeCpu), system, out.cpuPerEventUs, out.split);
        if (out.stored < n)
          notes.push(
            `(a) run ${run + 1}: ${subject} stored ${out.stored} of ${n} (${out.firstError ?? 'time bound reached'})`,
          );
      };
      const payloadOf = (i: number) => ctx.payload.make(seqBase + i);
      // Herald's body, to its ingress and to the floor's koa service alike.
      const notifyAt = (i: number): [string, string] => [
        '/notify',
        notifyBody(ctx.stack, one, payloadOf(i)),
      ];
      storeRow(
        SUBJECTS.heraldStore,
        'herald',
        'herald',
        await storeOne(ctx, PROCESSES.herald, ctx.http.ingress, n, 202, notifyAt),
      );
      for (const peer of ctx.centrifugo) {
        storeRow(
          SUBJECTS.centrifugoStore(peer.engine),
          'baseline',
          systemOf(peer),
          await storeOne(ctx, processesOf(peer), peer.api, n, 200, (i) => [
            '/api/publish',
            publishBody(one, payloadOf(i)),
          ]),
        );
      }
      storeRow(
        SUBJECTS.floorStore,
        'baseline',
        'designFloor',
        await storeOne(ctx, PROCESSES.floorStore, ctx.http.koaJetStream, n, 202, notifyAt),
      );
      seqBase += n;
      const rawOne = await metered(ctx, PROCESSES.nats, () => replay(ctx, [one], n));
      const rawRate = rawOne.delivered / ((rawOne.times[0] ?? Number.NaN) / 1000);
      rows.add(oneMetric, SUBJECTS.raw, 'baseline', 'events/s', rawRate);
      rows.add(oneCpu, SUBJECTS.raw, 'baseline', 'µs', rawOne.cpuPerEventUs);
      const heraldOne = await metered(ctx, PROCESSES.herald, () => reconnect(ctx, [one], n));
      const heraldRate = heraldOne.delivered / ((heraldOne.times[0] ?? Number.NaN) / 1000);
      rows.add(oneMetric, SUBJECTS.herald, 'herald', 'events/s', heraldRate);
      rows.add(oneCpu, SUBJECTS.herald, 'herald', 'µs', heraldOne.cpuPerEventUs);
      peers.add(declare(peers, row.drain, NO_STORE), 'herald', heraldRate);
      peers.add(declare(peers, row.drainCpu), 'herald', heraldOne.cpuPerEventUs, heraldOne.split);
      for (const peer of ctx.centrifugo) {
        const c = await metered(ctx, processesOf(peer), () =>
          centrifugoReconnect(ctx, peer, [one], n),
        );
        const rate = c.delivered / ((c.times[0] ?? Number.NaN) / 1000);
        rows.add(oneMetric, SUBJECTS.centrifugo(peer.engine), 'baseline', 'events/s', rate);
        rows.add(oneCpu, SUBJECTS.centrifugo(peer.engine), 'baseline', 'µs', c.cpuPerEventUs);
        peers.add(declare(peers, row.drain), systemOf(peer), rate);
        peers.add(declare(peers, row.drainCpu), systemOf(peer), c.cpuPerEventUs);
        if (c.delivered < n)
          notes.push(
            `(a) run ${run + 1}: ${peer.server.name} replayed ${c.delivered} of ${n} within ${config.drainTimeoutMs / 1000} s`,
          );
      }
      if (heraldOne.delivered < n)
        notes.push(
          `(a) run ${run + 1}: Herald delivered ${heraldOne.delivered} of ${n} within ${config.drainTimeoutMs / 1000} s`,
        );
      // The design floor reads what its koa service stored, through a durable consumer of its own.
      const floorOne = await metered(ctx, PROCESSES.floorDrain, () =>
        floorReconnect(ctx, [one], n, { stream: () => KOA_STREAM, subject: koaSubject }),
      );
      const floorRate = floorOne.delivered / ((floorOne.times[0] ?? Number.NaN) / 1000);
      rows.add(oneMetric, SUBJECTS.floor, 'baseline', 'events/s', floorRate);
      rows.add(oneCpu, SUBJECTS.floor, 'baseline', 'µs', floorOne.cpuPerEventUs);
      peers.add(declare(peers, row.drain), 'designFloor', floorRate);
      peers.add(declare(peers, row.drainCpu), 'designFloor', floorOne.cpuPerEventUs);
      await resetQueue(ctx);
      await ctx.jsm.streams.purge(KOA_STREAM);

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
        metered(ctx, PROCESSES.herald, () => reconnect(ctx, many, each)),
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
        floorReconnect(ctx, many, each, heraldQueue(ctx)),
      );
      phase('design floor drain');
      // Centrifugo: the same storm against each engine, the events published beforehand.
      const centrifugoMany: Array<[CentrifugoPeer, Awaited<ReturnType<typeof metered>>]> = [];
      for (const peer of ctx.centrifugo) {
        await publishMany(ctx, peer, many, each, seqBase);
        centrifugoMany.push([
          peer,
          await metered(ctx, processesOf(peer), () => centrifugoReconnect(ctx, peer, many, each)),
        ]);
      }
      seqBase += m * each;
      phase('Centrifugo storms');
      rows.add(natsCpu, SUBJECTS.herald, 'herald', 'ms', (1000 * cpuSeconds) / m);
      if (rssBefore !== undefined && rssAfter !== undefined)
        rows.add(natsRss, SUBJECTS.herald, 'herald', 'KB', (rssAfter - rssBefore) / 1024 / m);
      for (const [subject, role, r, system] of [
        [SUBJECTS.raw, 'baseline', rawMany, undefined],
        [SUBJECTS.herald, 'herald', heraldMany, 'herald'],
        [SUBJECTS.floor, 'baseline', floorMany, 'designFloor'],
        ...centrifugoMany.map(
          ([peer, r]) =>
            [SUBJECTS.centrifugo(peer.engine), 'baseline' as const, r, systemOf(peer)] as const,
        ),
      ] as const) {
        rows.add(manyP50, subject, role, 'ms', percentile(r.times, 50));
        rows.add(manyP99, subject, role, 'ms', percentile(r.times, 99));
        rows.add(manyDelivered, subject, role, '%', (100 * r.delivered) / (m * each));
        rows.add(manyCpu, subject, role, 'µs', r.cpuPerEventUs);
        if (system) {
          peers.add(declare(peers, row.storm, NO_STORE), system, percentile(r.times, 99));
          peers.add(declare(peers, row.stormCpu), system, r.cpuPerEventUs, r.split);
        }
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
        `figure 4: run ${run + 1}/${config.runs}: (a) Herald ${formatNumber(heraldRate)}/s vs raw ${formatNumber(rawRate)}/s, design floor ${formatNumber(floorRate)}/s; (b) Herald p99 ${formatNumber(percentile(heraldMany.times, 99))} ms, ${heraldMany.delivered}/${m * each} delivered, design floor p99 ${formatNumber(percentile(floorMany.times, 99))} ms${centrifugoMany.map(([peer, r]) => `, ${peer.server.name} p99 ${formatNumber(percentile(r.times, 99))} ms`).join('')} (${phases.join(', ')})`,
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
    ],
    peers: peers.lines(),
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
 * core's cost (every Herald process for Herald; nats-server for the raw replay, whose client runs
 * on the load generator's core), and for Herald the same split by process.
 */
async function metered(
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

interface StoreOutcome {
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
async function storeOne(
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
async function publishMany(
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

interface DrainOutcome {
  /** Per recipient: ms from the start until its last expected event (the time bound if it never came). */
  times: number[];
  /** Per recipient: ms from the start until its socket opened. */
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

/** What a storm's fleet reports: socket i opened, socket i received the event with this id. */
interface StormHandlers {
  onOpen: (i: number) => void;
  onEvent: (i: number, id: string) => void;
}

/** Opens one herald.v1 socket per recipient, all at once, acking every event as the SDK does. */
function reconnect(ctx: BenchContext, recipients: string[], each: number): Promise<DrainOutcome> {
  return storm(
    ctx,
    recipients,
    each,
    (on) =>
      new WsFleet({
        url: (i) => connectUrl(ctx.stack, recipients[i] as string),
        protocols: [SUBPROTOCOL],
        ...stormSettings(ctx, recipients.length),
        onOpen: on.onOpen,
        onMessage: (i, data, ws) => {
          const frame = JSON.parse(data.toString('utf8')) as { type: string; id: string };
          if (frame.type !== 'event') return;
          ws.send(`{"type":"ack","id":${JSON.stringify(frame.id)}}`);
          on.onEvent(i, frame.id);
        },
      }),
  );
}

/** Where Herald stores a recipient's events: the design floor's storm drains the same. */
function heraldQueue(ctx: BenchContext) {
  return {
    stream: (r: string) => queueLayout.streamOf(ctx.stack.account, r),
    subject: (r: string) => subjects.queue(ctx.stack.account, r),
  };
}

/**
 * The same storm against the design floor: one raw ws socket per recipient, whose server drains
 * the recipient's stored events from a durable consumer of its own (raw-ws-server.ts, drainQueue)
 * on the given stream and subject. The frames are the bare payloads; an event is told apart by
 * its sequence number.
 */
function floorReconnect(
  ctx: BenchContext,
  recipients: string[],
  each: number,
  source: { stream: (r: string) => string; subject: (r: string) => string },
): Promise<DrainOutcome> {
  return storm(
    ctx,
    recipients,
    each,
    (on) =>
      new WsFleet({
        url: (i) => {
          const r = recipients[i] as string;
          const q = new URLSearchParams({ stream: source.stream(r), subject: source.subject(r) });
          return `${rawWsUrl(ctx.baselines.rawWsOrigin, r)}&${q}`;
        },
        ...stormSettings(ctx, recipients.length),
        onOpen: on.onOpen,
        onMessage: (i, data) => {
          const seq = seqOf(data.toString('utf8'));
          if (seq >= 0) on.onEvent(i, String(seq));
        },
      }),
  );
}

/**
 * The same storm against Centrifugo: one socket per recipient connecting with
 * `recover: true, offset: 0, epoch: ""`, so the server replays the personal channel's history
 * (in the connect reply itself); an event is told apart by its sequence number.
 */
function centrifugoReconnect(
  ctx: BenchContext,
  peer: CentrifugoPeer,
  recipients: string[],
  each: number,
): Promise<DrainOutcome> {
  return storm(ctx, recipients, each, (on) =>
    centrifugoFleet({
      server: peer.server,
      recipient: (i) => recipients[i] as string,
      recover: true,
      ...stormSettings(ctx, recipients.length),
      onOpen: on.onOpen,
      onPublication: (i, data) => on.onEvent(i, String(seqOfValue(data))),
    }),
  );
}

/**
 * Opens one socket per recipient, all at once, and times each recipient until `each` distinct
 * events (by the id its fleet reports) have arrived.
 */
async function storm(
  ctx: BenchContext,
  recipients: string[],
  each: number,
  makeFleet: (on: StormHandlers) => WsFleet,
): Promise<DrainOutcome> {
  const drains: Drain[] = recipients.map(() => ({
    ids: new Set(),
    doneAt: Number.POSITIVE_INFINITY,
    openAt: Number.POSITIVE_INFINITY,
  }));
  let complete = 0;
  let delivered = 0;
  const fleet = makeFleet({
    onOpen: (i) => {
      (drains[i] as Drain).openAt = performance.now();
    },
    onEvent: (i, id) => {
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

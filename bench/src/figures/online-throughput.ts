import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { FLOOR_DISPATCH_SUBJECT } from '../baselines/names.js';
import { statusPauser } from '../env/status-pause.js';
import { centrifugoFleet } from '../load/centrifugo-fleet.js';
import type { Poster } from '../load/http-poster.js';
import { closedLoop, type LoopResult, waitUntil } from '../load/pace.js';
import { SioFleet } from '../load/sio-fleet.js';
import { WsFleet } from '../load/ws-fleet.js';
import { seqOfFrame, seqOfValue } from '../payload.js';
import { declare, PeerCollector, peerRows, type System } from '../report/peers.js';
import {
  type Check,
  type FigureResult,
  formatNumber,
  type Role,
  RowCollector,
  ratioCheckAtLeast,
} from '../report/results.js';
import {
  batchBody,
  expectBatchPublished,
  expectPublished,
  publishBody,
} from './centrifugo-wire.js';
import {
  type BenchContext,
  HANDSHAKE_TIMEOUT_MS,
  MAX_OPS_PER_SEC,
  SETTLE_TIMEOUT_MS,
} from './context.js';
import {
  centrifugoProcesses,
  centrifugoSystem,
  meterCpu,
  PROCESSES,
  perUnitUs,
} from './cpu-meter.js';
import { DeliveryTracker } from './delivery-tracker.js';
import {
  batchOutcome,
  connectUrl,
  dispatchSubject,
  notifyBatchBody,
  notifyBody,
  pushBatchBody,
  pushBody,
  rawWsUrl,
} from './herald-wire.js';

export const SUBJECTS = {
  heraldHttp: 'Herald POST /notify',
  heraldNats: 'Herald rt.dispatch (NATS)',
  heraldBatch: 'Herald POST /notify/batch',
  rawPush: 'baseline: raw ws server push loop',
  rawHttp: 'baseline: raw ws POST /push',
  rawBatch: 'baseline: raw ws POST /push/batch',
  socketIo: 'baseline: Socket.IO POST /push → io.to(room).emit',
  socketIoBatch: 'baseline: Socket.IO POST /push/batch',
  floorHttp: 'baseline: design floor, POST /notify → NATS → raw ws',
  floorNats: 'baseline: design floor, NATS request → relay → raw ws',
  floorBatch: 'baseline: design floor, POST /notify/batch',
  statusOff: (subject: string) => `${subject}, status service paused`,
  centrifugo: (engine: string) => `baseline: Centrifugo (${engine} engine) POST /api/publish`,
  centrifugoBatch: (engine: string) => `baseline: Centrifugo (${engine} engine) POST /api/batch`,
} as const;

/** A batch target's subject at a number of requests in flight. */
const inFlight = (subject: string, k: number) => `${subject}, ${k} in flight`;

/** After an overload window, how long duplicates (a stored copy of a delivered event) may take. */
const DUPLICATE_GRACE_MS = 1000;

/** The job a target does, which names its line in issue 31's table. */
type Job = 'single' | 'batch' | 'overload' | 'other';

interface Target {
  subject: string;
  role: Role;
  system?: System;
  job: Job;
  /** The server processes doing the work, whose CPU time is charged to each delivery. */
  processes: readonly string[];
  tracker: DeliveryTracker;
  /** The HTTP client the load goes through, warmed before each window. */
  http?: Poster;
  /** Every frame counts (the push loop sends one payload over and over). */
  countAll?: boolean;
  /** Before its measured window (not metered): takes a part out, and returns what puts it back. */
  pause?: () => Promise<() => Promise<void>>;
  /**
   * Runs the load for one window, its events numbered from `base`: resolves with the events
   * accepted (each to be delivered), those answered 202 (stored, not sent), and how many numbers
   * it used.
   */
  load(
    windowMs: number,
    base: number,
  ): Promise<{ expected: number; stored: number; used: number; start: number; loop?: LoopResult }>;
}

interface Fleets {
  herald: DeliveryTracker;
  raw: DeliveryTracker;
  sio: DeliveryTracker;
  centrifugo: DeliveryTracker[];
}

const metricOf = (n: number) => `deliveries/s, ${n.toLocaleString('en-US')} recipients`;
const cpuMetricOf = (n: number) =>
  `server CPU per delivery, ${n.toLocaleString('en-US')} recipients`;
const dupMetricOf = (n: number) =>
  `events delivered twice, ${n.toLocaleString('en-US')} recipients`;
const storedMetricOf = (n: number) =>
  `events to connected recipients answered 202, ${n.toLocaleString('en-US')} recipients`;

/**
 * Figure 2: online dispatch throughput. N recipients hold one socket each on every server; each
 * target is driven for a window with the same closed-loop client, and deliveries/s counts the
 * distinct events that reached the sockets (by their sequence numbers, so an event delivered
 * twice counts once, and as a duplicate). Targets are interleaved within each run so machine
 * drift hits all. One set of fleets grows through the sizes, so no socket is opened twice.
 */
export async function onlineThroughput(ctx: BenchContext): Promise<FigureResult> {
  const started = performance.now();
  const rows = new RowCollector('2');
  const peers = new PeerCollector('2');
  const notes: string[] = [];
  const { config } = ctx;
  const sizes = [...config.recipients].sort((a, b) => a - b);
  const recipients = Array.from({ length: sizes.at(-1) ?? 0 }, () => randomUUID());
  const trackers: Fleets = {
    herald: new DeliveryTracker(),
    raw: new DeliveryTracker(),
    sio: new DeliveryTracker(),
    centrifugo: ctx.centrifugo.map(() => new DeliveryTracker()),
  };
  const fleetOpts = {
    tls: ctx.tls,
    addresses: ctx.addresses,
    concurrency: config.connectConcurrency,
    handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
  };
  const fleets: Array<readonly [string, WsFleet | SioFleet]> = [
    [
      'Herald',
      new WsFleet({
        ...fleetOpts,
        url: (i) => connectUrl(ctx.stack, recipients[i] as string),
        onMessage: (_i, data) => trackers.herald.hit(seqOfFrame(data)),
      }),
    ],
    [
      'raw ws',
      new WsFleet({
        ...fleetOpts,
        url: (i) => rawWsUrl(ctx.baselines.rawWsOrigin, recipients[i] as string),
        onMessage: (_i, data) => trackers.raw.hit(seqOfFrame(data)),
      }),
    ],
    [
      'Socket.IO',
      new SioFleet({
        ...fleetOpts,
        origin: ctx.baselines.socketIoOrigin,
        recipient: (i) => recipients[i] as string,
        onEvent: (_i, payload) => trackers.sio.hit(seqOfValue(payload)),
      }),
    ],
    ...ctx.centrifugo.map(
      (peer, k) =>
        [
          peer.server.name,
          centrifugoFleet({
            ...fleetOpts,
            server: peer.server,
            recipient: (i) => recipients[i] as string,
            recover: false,
            onPublication: (_i, data) => trackers.centrifugo[k]?.hit(seqOfValue(data)),
          }),
        ] as const,
    ),
  ];
  let nextSeq = 0;
  try {
    for (const n of sizes) {
      ctx.log(`figure 2: connecting ${n} sockets to ${fleets.map(([name]) => name).join(', ')}`);
      for (const [name, fleet] of fleets) {
        const out = await fleet.grow(n - fleet.size);
        if (out.failed > 0) {
          throw new Error(`${name}: ${out.failed} of ${n} connects failed: ${out.firstError}`);
        }
      }
      const targets = targetsFor(ctx, recipients.slice(0, n), trackers);
      // Issue 31's lines are read at the first size (1,000 recipients by default).
      const forPeers = n === sizes[0];
      const row = peerRows(config);
      // Warm-up: JIT, key caches and keep-alive connections, for every target alike.
      for (const t of targets) {
        if (config.warmupMs <= 0) continue;
        const m = await measure(t, config.warmupMs, nextSeq);
        nextSeq += m.used;
      }
      for (let run = 0; run < config.runs; run++) {
        ctx.checkDeadline();
        const line: string[] = [];
        for (const t of targets) {
          await t.http?.warm();
          const resume = await t.pause?.();
          const {
            result: m,
            cpuSeconds,
            perProcess,
          } = await meterCpu(ctx.servers, t.processes, () =>
            measure(t, config.measureMs, nextSeq),
          ).finally(() => resume?.());
          nextSeq += m.used;
          const cpuUs = (1e6 * cpuSeconds) / m.delivered;
          const dupPct = (100 * m.duplicates) / Math.max(1, m.delivered);
          rows.add(metricOf(n), t.subject, t.role, 'deliveries/s', m.rate);
          rows.add(cpuMetricOf(n), t.subject, t.role, 'µs', cpuUs);
          if (!t.countAll) rows.add(dupMetricOf(n), t.subject, t.role, '%', dupPct);
          if (t.job === 'batch' || t.job === 'overload')
            rows.add(storedMetricOf(n), t.subject, t.role, 'events', m.stored);
          if (forPeers && t.system && t.job !== 'other') {
            const split = t.system === 'herald' ? perUnitUs(perProcess, m.delivered) : undefined;
            const [rate, cpu] =
              t.job === 'single'
                ? [row.online, row.onlineCpu]
                : t.job === 'batch'
                  ? [row.batch, row.batchCpu]
                  : [row.overload, row.overloadCpu];
            peers.add(declare(peers, rate), t.system, m.rate);
            peers.add(declare(peers, cpu), t.system, cpuUs, split);
            if (t.job === 'overload') {
              peers.add(declare(peers, row.duplicates), t.system, dupPct);
              peers.add(
                declare(
                  peers,
                  row.answered202,
                  'Centrifugo, Socket.IO and raw ws answer 200 for a live publish: they store nothing for a connected recipient, so only Herald and the floor can answer 202',
                ),
                t.system,
                m.stored,
              );
            }
          }
          line.push(`${t.subject.replace('baseline: ', '')} ${formatNumber(m.rate)}`);
          if (m.lost > 0 || m.failed > 0 || m.duplicates > 0 || m.late > 0) {
            notes.push(
              `${t.subject}, ${n} recipients, run ${run + 1}: ${m.failed} failed requests, ${m.lost} deliveries missing after ${SETTLE_TIMEOUT_MS / 1000} s, ${m.duplicates} delivered twice, ${m.stored} answered 202, ${m.late} frames of earlier windows${m.firstError ? ` (${m.firstError})` : ''}`,
            );
          }
        }
        ctx.log(`figure 2: ${n} recipients, run ${run + 1}/${config.runs}: ${line.join(', ')}`);
      }
    }
    const closes = fleets.map(([name, f]) => `${name} ${f.unexpectedCloses}`);
    if (fleets.some(([, f]) => f.unexpectedCloses > 0)) {
      notes.push(`Sockets closed by the server during the runs: ${closes.join(', ')}.`);
    }
  } finally {
    await Promise.all(fleets.map(([, f]) => f.close()));
  }
  return {
    id: '2',
    title: 'Online dispatch throughput',
    rows: rows.rows(),
    checks: sizes.flatMap((n) => checksFor(rows, n, config.batchSize, config.concurrency)),
    ratios: sizes.flatMap((n) =>
      Object.values(ratiosFor(rows, n, config.batchSize, config.concurrency)),
    ),
    peers: peers.lines(),
    notes,
    elapsedMs: performance.now() - started,
  };
}

/**
 * Every way of delivering to the N connected recipients, each with its own tracker. The design
 * floor rows reach the raw ws fleet through DESIGN.md's three-process shape with none of Herald's
 * work (baselines/design-floor-relay.ts): what the shape itself costs on this core. Every batch
 * runs twice: at BENCH_BATCH_CONCURRENCY requests in flight, and at BENCH_CONCURRENCY (overload,
 * where issue 31 counts duplicates and 202s).
 */
function targetsFor(ctx: BenchContext, recipients: string[], trackers: Fleets): Target[] {
  const { config } = ctx;
  const n = recipients.length;
  const to = (seq: number) => recipients[seq % n] as string;
  const size = config.batchSize;
  type Answer = { sent: number; stored: number };
  /** A closed loop whose op i sends events base + i*perOp .. +perOp-1 and says how they were answered. */
  const closed =
    (op: (seq: number) => Promise<Answer>, perOp: number, concurrency = config.concurrency) =>
    async (windowMs: number, base: number) => {
      const start = performance.now();
      let sent = 0;
      let stored = 0;
      const loop = await closedLoop(
        concurrency,
        { durationMs: windowMs, maxCount: (windowMs / 1000) * MAX_OPS_PER_SEC },
        async (i) => {
          const a = await op(base + i * perOp);
          sent += a.sent;
          stored += a.stored;
        },
      );
      return { expected: sent + stored, stored, used: loop.issued * perOp, start, loop };
    };
  const one = async (p: Promise<{ status: number; text: string }>): Promise<Answer> => {
    const r = await p;
    if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${r.text.slice(0, 200)}`);
    return { sent: 1, stored: 0 };
  };
  const events = (seq: number) =>
    Array.from({ length: size }, (_, k) => ({
      recipient: to(seq + k),
      payloadJson: ctx.payload.make(seq + k),
    }));
  /** `POST /notify` with Herald's body, to Herald's ingress or the design floor's relay. */
  const notifyOver = (http: Poster) => (seq: number) =>
    one(http.post('/notify', notifyBody(ctx.stack, to(seq), ctx.payload.make(seq))));
  const notifyBatchOver = (http: Poster) => async (seq: number) =>
    batchOutcome(await http.post('/notify/batch', notifyBatchBody(ctx.stack, events(seq))), size);
  const pushBatchOver = (http: Poster) => async (seq: number) =>
    batchOutcome(await http.post('/push/batch', pushBatchBody(events(seq))), size);
  /** The same body as a NATS request, answered with the HTTP body plus `http_status`. */
  const dispatchOver = (subject: string) => async (seq: number) => {
    const reply = await ctx.nc.request(
      subject,
      notifyBody(ctx.stack, to(seq), ctx.payload.make(seq)),
      { timeout: 5000 },
    );
    const body = JSON.parse(reply.string()) as { http_status?: number };
    if (body.http_status !== 200)
      throw new Error(`${subject} replied ${reply.string().slice(0, 200)}`);
    return { sent: 1, stored: 0 };
  };
  /** A batch target twice: below overload and at it. */
  const batchPair = (
    t: Omit<Target, 'job' | 'load' | 'subject'> & { subject: string },
    op: (seq: number) => Promise<Answer>,
  ): Target[] => [
    {
      ...t,
      subject: inFlight(t.subject, config.batchConcurrency),
      job: 'batch',
      load: closed(op, size, config.batchConcurrency),
    },
    {
      ...t,
      subject: inFlight(t.subject, config.concurrency),
      job: 'overload',
      load: closed(op, size),
    },
  ];
  const side = (
    role: Role,
    system: System,
    processes: readonly string[],
    tracker: DeliveryTracker,
  ) => ({
    role,
    system,
    processes,
    tracker,
  });
  const herald = side('herald', 'herald', PROCESSES.herald, trackers.herald);
  /** BENCH_STATUS_OFF: Herald's single and batch rows again, the status service paused. */
  const statusOffTargets = (): Target[] => {
    const pause = statusPauser(ctx.stack.processes, ctx.jsm);
    const off = { ...herald, system: undefined, job: 'other' as const, pause };
    return [
      {
        ...off,
        subject: SUBJECTS.statusOff(SUBJECTS.heraldHttp),
        http: ctx.http.ingress,
        load: closed(notifyOver(ctx.http.ingress), 1),
      },
      {
        ...off,
        subject: SUBJECTS.statusOff(inFlight(SUBJECTS.heraldBatch, config.batchConcurrency)),
        http: ctx.http.ingress,
        load: closed(notifyBatchOver(ctx.http.ingress), size, config.batchConcurrency),
      },
    ];
  };
  const raw = side('baseline', 'rawWs', PROCESSES.rawWs, trackers.raw);
  const floor = side('baseline', 'designFloor', PROCESSES.designFloor, trackers.raw);
  const sio = side('baseline', 'socketIo', PROCESSES.socketIo, trackers.sio);
  return [
    {
      ...herald,
      subject: SUBJECTS.heraldHttp,
      job: 'single',
      http: ctx.http.ingress,
      load: closed(notifyOver(ctx.http.ingress), 1),
    },
    {
      ...herald,
      subject: SUBJECTS.heraldNats,
      job: 'other',
      load: closed(dispatchOver(dispatchSubject(ctx.stack)), 1),
    },
    ...batchPair(
      { ...herald, subject: SUBJECTS.heraldBatch, http: ctx.http.ingress },
      notifyBatchOver(ctx.http.ingress),
    ),
    ...(config.statusOff ? statusOffTargets() : []),
    ...ctx.centrifugo.flatMap((peer, k): Target[] => {
      const c = {
        ...side(
          'baseline',
          centrifugoSystem(peer.engine),
          centrifugoProcesses(peer.engine),
          trackers.centrifugo[k] as DeliveryTracker,
        ),
        http: peer.api,
      };
      return [
        {
          ...c,
          subject: SUBJECTS.centrifugo(peer.engine),
          job: 'single',
          load: closed(async (seq) => {
            expectPublished(
              await peer.api.post('/api/publish', publishBody(to(seq), ctx.payload.make(seq))),
            );
            return { sent: 1, stored: 0 };
          }, 1),
        },
        ...batchPair({ ...c, subject: SUBJECTS.centrifugoBatch(peer.engine) }, async (seq) => {
          expectBatchPublished(await peer.api.post('/api/batch', batchBody(events(seq))), size);
          return { sent: size, stored: 0 };
        }),
      ];
    }),
    {
      ...raw,
      system: undefined,
      subject: SUBJECTS.rawPush,
      job: 'other',
      countAll: true,
      async load(windowMs, base) {
        const start = performance.now();
        const r = await ctx.http.rawWs.post(
          '/blast',
          JSON.stringify({
            payload: ctx.payload.make(base),
            durationMs: windowMs,
            maxCount: (windowMs / 1000) * MAX_OPS_PER_SEC,
          }),
        );
        const sent = (JSON.parse(r.text) as { sent: number }).sent;
        return { expected: sent, stored: 0, used: 1, start };
      },
    },
    {
      ...raw,
      subject: SUBJECTS.rawHttp,
      job: 'single',
      http: ctx.http.rawWs,
      load: closed(
        (seq) => one(ctx.http.rawWs.post('/push', pushBody(to(seq), ctx.payload.make(seq)))),
        1,
      ),
    },
    ...batchPair(
      { ...raw, subject: SUBJECTS.rawBatch, http: ctx.http.rawWs },
      pushBatchOver(ctx.http.rawWs),
    ),
    {
      ...floor,
      subject: SUBJECTS.floorHttp,
      job: 'single',
      http: ctx.http.designFloor,
      load: closed(notifyOver(ctx.http.designFloor), 1),
    },
    {
      ...floor,
      subject: SUBJECTS.floorNats,
      job: 'other',
      load: closed(dispatchOver(FLOOR_DISPATCH_SUBJECT), 1),
    },
    ...batchPair(
      { ...floor, subject: SUBJECTS.floorBatch, http: ctx.http.designFloor },
      notifyBatchOver(ctx.http.designFloor),
    ),
    {
      ...sio,
      subject: SUBJECTS.socketIo,
      job: 'single',
      http: ctx.http.socketIo,
      load: closed(
        (seq) => one(ctx.http.socketIo.post('/push', pushBody(to(seq), ctx.payload.make(seq)))),
        1,
      ),
    },
    ...batchPair(
      { ...sio, subject: SUBJECTS.socketIoBatch, http: ctx.http.socketIo },
      pushBatchOver(ctx.http.socketIo),
    ),
  ];
}

/** The targets of issue 11 at n recipients, on same-run ratios against Socket.IO. */
function checksFor(rows: RowCollector, n: number, batch: number, concurrency: number): Check[] {
  const r = ratiosFor(rows, n, batch, concurrency);
  return [
    ratioCheckAtLeast('2', `${n} recipients, POST /notify: Herald ≥ 1.0× Socket.IO`, r.http, 1.0),
    ratioCheckAtLeast('2', `${n} recipients, rt.dispatch: Herald ≥ 1.5× Socket.IO`, r.nats, 1.5),
    ratioCheckAtLeast(
      '2',
      `${n} recipients, batch of ${batch}: Herald ≥ 5× Socket.IO per delivery`,
      r.batch,
      5,
    ),
  ];
}

function ratiosFor(rows: RowCollector, n: number, batch: number, concurrency: number) {
  const metric = metricOf(n);
  const vs = (label: string, herald: string, baseline: string) =>
    rows.ratio(`${n} recipients: ${label}`, metric, herald, baseline);
  return {
    http: vs('POST /notify ÷ Socket.IO', SUBJECTS.heraldHttp, SUBJECTS.socketIo),
    nats: vs('rt.dispatch ÷ Socket.IO', SUBJECTS.heraldNats, SUBJECTS.socketIo),
    batch: vs(
      `batch of ${batch}, ${concurrency} in flight ÷ Socket.IO POST /push`,
      inFlight(SUBJECTS.heraldBatch, concurrency),
      SUBJECTS.socketIo,
    ),
    httpRaw: vs('POST /notify ÷ raw ws POST /push', SUBJECTS.heraldHttp, SUBJECTS.rawHttp),
    pushLoop: vs('rt.dispatch ÷ raw ws push loop', SUBJECTS.heraldNats, SUBJECTS.rawPush),
    httpFloor: vs('POST /notify ÷ design floor POST', SUBJECTS.heraldHttp, SUBJECTS.floorHttp),
    natsFloor: vs('rt.dispatch ÷ design floor NATS', SUBJECTS.heraldNats, SUBJECTS.floorNats),
    floorHttpSio: vs('design floor POST ÷ Socket.IO', SUBJECTS.floorHttp, SUBJECTS.socketIo),
    floorNatsSio: vs('design floor NATS ÷ Socket.IO', SUBJECTS.floorNats, SUBJECTS.socketIo),
  };
}

async function measure(
  t: Target,
  windowMs: number,
  base: number,
): Promise<{
  rate: number;
  delivered: number;
  duplicates: number;
  stored: number;
  late: number;
  lost: number;
  failed: number;
  used: number;
  firstError?: string;
}> {
  t.tracker.start(base, { distinct: !t.countAll });
  const { expected, stored, used, start, loop } = await t.load(windowMs, base);
  await waitUntil(() => t.tracker.received >= expected, SETTLE_TIMEOUT_MS);
  // A stored copy of an event already delivered comes after the live one: give it time to show.
  if (t.job === 'overload') await new Promise((r) => setTimeout(r, DUPLICATE_GRACE_MS));
  const elapsed = (t.tracker.lastAt - start) / 1000;
  return {
    rate: elapsed > 0 ? t.tracker.received / elapsed : 0,
    delivered: t.tracker.received,
    duplicates: t.tracker.duplicates,
    stored,
    late: t.tracker.late,
    lost: Math.max(0, expected - t.tracker.received),
    failed: loop?.failed ?? 0,
    used,
    ...(loop?.firstError === undefined ? {} : { firstError: loop.firstError }),
  };
}

import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { FLOOR_DISPATCH_SUBJECT } from '../baselines/names.js';
import type { Poster } from '../load/http-poster.js';
import { closedLoop, type LoopResult, waitUntil } from '../load/pace.js';
import { SioFleet } from '../load/sio-fleet.js';
import { WsFleet } from '../load/ws-fleet.js';
import {
  type Check,
  type FigureResult,
  formatNumber,
  type Role,
  RowCollector,
  ratioCheckAtLeast,
} from '../report/results.js';
import {
  type BenchContext,
  HANDSHAKE_TIMEOUT_MS,
  MAX_OPS_PER_SEC,
  SETTLE_TIMEOUT_MS,
} from './context.js';
import { meterCpu, PROCESSES } from './cpu-meter.js';
import { DeliveryCounter } from './delivery-counter.js';
import {
  connectUrl,
  dispatchSubject,
  expectBatch,
  notifyBatchBody,
  notifyBody,
  pushBody,
  rawWsUrl,
} from './herald-wire.js';

export const SUBJECTS = {
  heraldHttp: 'Herald POST /notify',
  heraldNats: 'Herald rt.dispatch (NATS)',
  heraldBatch: 'Herald POST /notify/batch',
  rawPush: 'baseline: raw ws server push loop',
  rawHttp: 'baseline: raw ws POST /push',
  socketIo: 'baseline: Socket.IO POST /push → io.to(room).emit',
  floorHttp: 'baseline: design floor, POST /notify → NATS → raw ws',
  floorNats: 'baseline: design floor, NATS request → relay → raw ws',
} as const;

interface Target {
  subject: string;
  role: Role;
  /** The server processes doing the work, whose CPU time is charged to each delivery. */
  processes: readonly string[];
  counter: DeliveryCounter;
  /** The HTTP client the load goes through, warmed before each window. */
  http?: Poster;
  /** Runs the load for one window; resolves with the deliveries to expect and when it started. */
  load(windowMs: number): Promise<{ expected: number; start: number; loop?: LoopResult }>;
}

interface Counters {
  herald: DeliveryCounter;
  raw: DeliveryCounter;
  sio: DeliveryCounter;
}

const metricOf = (n: number) => `deliveries/s, ${n.toLocaleString('en-US')} recipients`;
const cpuMetricOf = (n: number) =>
  `server CPU per delivery, ${n.toLocaleString('en-US')} recipients`;

/**
 * Figure 2: online dispatch throughput. N recipients hold one socket each on every server; each
 * target is driven for a window with the same closed-loop client, and deliveries/s counts frames
 * that reached the sockets. Targets are interleaved within each run so machine drift hits all.
 * One set of fleets grows through the sizes (1,000, then 4,000 more), so no socket is opened twice.
 */
export async function onlineThroughput(ctx: BenchContext): Promise<FigureResult> {
  const started = performance.now();
  const rows = new RowCollector('2');
  const notes: string[] = [];
  const { config } = ctx;
  const sizes = [...config.recipients].sort((a, b) => a - b);
  const recipients = Array.from({ length: sizes.at(-1) ?? 0 }, () => randomUUID());
  const counters: Counters = {
    herald: new DeliveryCounter(),
    raw: new DeliveryCounter(),
    sio: new DeliveryCounter(),
  };
  const fleetOpts = {
    tls: ctx.tls,
    addresses: ctx.addresses,
    concurrency: config.connectConcurrency,
    handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
  };
  const fleets = [
    [
      'Herald',
      new WsFleet({
        ...fleetOpts,
        url: (i) => connectUrl(ctx.stack, recipients[i] as string),
        onMessage: counters.herald.hit,
      }),
    ],
    [
      'raw ws',
      new WsFleet({
        ...fleetOpts,
        url: (i) => rawWsUrl(ctx.baselines.rawWsOrigin, recipients[i] as string),
        onMessage: counters.raw.hit,
      }),
    ],
    [
      'Socket.IO',
      new SioFleet({
        ...fleetOpts,
        origin: ctx.baselines.socketIoOrigin,
        recipient: (i) => recipients[i] as string,
        onEvent: counters.sio.hit,
      }),
    ],
  ] as const;
  try {
    for (const n of sizes) {
      ctx.log(`figure 2: connecting ${n} sockets to Herald, raw ws and Socket.IO`);
      for (const [name, fleet] of fleets) {
        const out = await fleet.grow(n - fleet.size);
        if (out.failed > 0) {
          throw new Error(`${name}: ${out.failed} of ${n} connects failed: ${out.firstError}`);
        }
      }
      const targets = targetsFor(ctx, recipients.slice(0, n), counters);
      // Warm-up: JIT, key caches and keep-alive connections, for every target alike.
      for (const t of targets) if (config.warmupMs > 0) await measure(t, config.warmupMs);
      for (let run = 0; run < config.runs; run++) {
        ctx.checkDeadline();
        const line: string[] = [];
        for (const t of targets) {
          await t.http?.warm();
          const { result: m, cpuSeconds } = await meterCpu(ctx.servers, t.processes, () =>
            measure(t, config.measureMs),
          );
          rows.add(metricOf(n), t.subject, t.role, 'deliveries/s', m.rate);
          rows.add(cpuMetricOf(n), t.subject, t.role, 'µs', (1e6 * cpuSeconds) / m.delivered);
          line.push(`${t.subject.replace('baseline: ', '')} ${formatNumber(m.rate)}`);
          if (m.lost > 0 || m.failed > 0) {
            notes.push(
              `${t.subject}, ${n} recipients, run ${run + 1}: ${m.failed} failed requests, ${m.lost} deliveries missing after ${SETTLE_TIMEOUT_MS / 1000} s${m.firstError ? ` (${m.firstError})` : ''}`,
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
    checks: sizes.flatMap((n) => checksFor(rows, n, config.batchSize)),
    ratios: sizes.flatMap((n) => Object.values(ratiosFor(rows, n, config.batchSize))),
    notes,
    elapsedMs: performance.now() - started,
  };
}

/**
 * The eight ways of delivering to the N connected recipients, each with its own counter. The two
 * design-floor rows reach the raw ws fleet through DESIGN.md's three-process shape with none of
 * Herald's work (baselines/design-floor-relay.ts): what the shape itself costs on this core.
 */
function targetsFor(ctx: BenchContext, recipients: string[], counters: Counters): Target[] {
  const { config } = ctx;
  const n = recipients.length;
  const to = (i: number) => recipients[i % n] as string;
  const batch = config.batchSize;
  const closed =
    (op: (i: number) => Promise<void>, eventsPerOp = 1) =>
    async (windowMs: number): Promise<{ expected: number; start: number; loop: LoopResult }> => {
      const start = performance.now();
      const loop = await closedLoop(
        config.concurrency,
        { durationMs: windowMs, maxCount: (windowMs / 1000) * MAX_OPS_PER_SEC },
        op,
      );
      return { expected: loop.completed * eventsPerOp, start, loop };
    };
  const expect200 = async (p: Promise<{ status: number; text: string }>) => {
    const r = await p;
    if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${r.text.slice(0, 200)}`);
  };
  /** `POST /notify` with Herald's body, to Herald's ingress or the design floor's relay. */
  const notifyOver = (http: Poster) =>
    closed((i) =>
      expect200(http.post('/notify', notifyBody(ctx.stack, to(i), ctx.payload.make(i)))),
    );
  /** The same body as a NATS request, answered with the HTTP body plus `http_status`. */
  const dispatchOver = (subject: string) =>
    closed(async (i) => {
      const reply = await ctx.nc.request(
        subject,
        notifyBody(ctx.stack, to(i), ctx.payload.make(i)),
        { timeout: 5000 },
      );
      const body = JSON.parse(reply.string()) as { http_status?: number };
      if (body.http_status !== 200) {
        throw new Error(`${subject} replied ${reply.string().slice(0, 200)}`);
      }
    });
  return [
    {
      subject: SUBJECTS.heraldHttp,
      role: 'herald',
      processes: PROCESSES.herald,
      counter: counters.herald,
      http: ctx.http.ingress,
      load: notifyOver(ctx.http.ingress),
    },
    {
      subject: SUBJECTS.heraldNats,
      role: 'herald',
      processes: PROCESSES.herald,
      counter: counters.herald,
      load: dispatchOver(dispatchSubject(ctx.stack)),
    },
    {
      subject: SUBJECTS.heraldBatch,
      role: 'herald',
      processes: PROCESSES.herald,
      counter: counters.herald,
      http: ctx.http.ingress,
      load: closed(async (i) => {
        const body = notifyBatchBody(
          ctx.stack,
          Array.from({ length: batch }, (_, k) => ({
            recipient: to(i * batch + k),
            payloadJson: ctx.payload.make(i * batch + k),
          })),
        );
        expectBatch(await ctx.http.ingress.post('/notify/batch', body), batch, 200);
      }, batch),
    },
    {
      subject: SUBJECTS.rawPush,
      role: 'baseline',
      processes: PROCESSES.rawWs,
      counter: counters.raw,
      async load(windowMs) {
        const start = performance.now();
        const r = await ctx.http.rawWs.post(
          '/blast',
          JSON.stringify({
            payload: ctx.payload.make(0),
            durationMs: windowMs,
            maxCount: (windowMs / 1000) * MAX_OPS_PER_SEC,
          }),
        );
        return { expected: (JSON.parse(r.text) as { sent: number }).sent, start };
      },
    },
    {
      subject: SUBJECTS.rawHttp,
      role: 'baseline',
      processes: PROCESSES.rawWs,
      counter: counters.raw,
      http: ctx.http.rawWs,
      load: closed((i) =>
        expect200(ctx.http.rawWs.post('/push', pushBody(to(i), ctx.payload.make(i)))),
      ),
    },
    {
      subject: SUBJECTS.floorHttp,
      role: 'baseline',
      processes: PROCESSES.designFloor,
      counter: counters.raw,
      http: ctx.http.designFloor,
      load: notifyOver(ctx.http.designFloor),
    },
    {
      subject: SUBJECTS.floorNats,
      role: 'baseline',
      processes: PROCESSES.designFloor,
      counter: counters.raw,
      load: dispatchOver(FLOOR_DISPATCH_SUBJECT),
    },
    {
      subject: SUBJECTS.socketIo,
      role: 'baseline',
      processes: PROCESSES.socketIo,
      counter: counters.sio,
      http: ctx.http.socketIo,
      load: closed((i) =>
        expect200(ctx.http.socketIo.post('/push', pushBody(to(i), ctx.payload.make(i)))),
      ),
    },
  ];
}

/** The targets of issue 11 at n recipients, on same-run ratios against Socket.IO. */
function checksFor(rows: RowCollector, n: number, batch: number): Check[] {
  const r = ratiosFor(rows, n, batch);
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

function ratiosFor(rows: RowCollector, n: number, batch: number) {
  const metric = metricOf(n);
  const vs = (label: string, herald: string, baseline: string) =>
    rows.ratio(`${n} recipients: ${label}`, metric, herald, baseline);
  return {
    http: vs('POST /notify ÷ Socket.IO', SUBJECTS.heraldHttp, SUBJECTS.socketIo),
    nats: vs('rt.dispatch ÷ Socket.IO', SUBJECTS.heraldNats, SUBJECTS.socketIo),
    batch: vs(`batch of ${batch} ÷ Socket.IO`, SUBJECTS.heraldBatch, SUBJECTS.socketIo),
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
): Promise<{ rate: number; delivered: number; lost: number; failed: number; firstError?: string }> {
  t.counter.reset();
  const { expected, start, loop } = await t.load(windowMs);
  await waitUntil(() => t.counter.received >= expected, SETTLE_TIMEOUT_MS);
  const elapsed = (t.counter.lastAt - start) / 1000;
  return {
    rate: elapsed > 0 ? t.counter.received / elapsed : 0,
    delivered: t.counter.received,
    lost: Math.max(0, expected - t.counter.received),
    failed: loop?.failed ?? 0,
    ...(loop?.firstError === undefined ? {} : { firstError: loop.firstError }),
  };
}

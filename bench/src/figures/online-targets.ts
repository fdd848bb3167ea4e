import { performance } from 'node:perf_hooks';
import { FLOOR_DISPATCH_SUBJECT } from '../baselines/names.js';
import { statusPauser } from '../env/status-pause.js';
import type { Poster } from '../load/http-poster.js';
import type { LoopResult } from '../load/pace.js';
import type { System } from '../report/peers.js';
import type { Role } from '../report/results.js';
import {
  batchBody,
  expectBatchPublished,
  expectPublished,
  publishBody,
} from './centrifugo-wire.js';
import { type BenchContext, MAX_OPS_PER_SEC } from './context.js';
import { centrifugoProcesses, centrifugoSystem, PROCESSES } from './cpu-meter.js';
import type { DeliveryTracker } from './delivery-tracker.js';
import { dispatchSubject } from './herald-wire.js';
import { type Answer, targetOps } from './online-ops.js';

/*
 * Figure 2's targets: every way of delivering to the N connected recipients (Herald's paths, the
 * baselines, Centrifugo), each a closed loop of requests for one window. How their requests are
 * sent and answered is in online-ops.ts; the figure's loop, checks and ratios in
 * online-throughput.ts.
 */

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
export const inFlight = (subject: string, k: number) => `${subject}, ${k} in flight`;

/** The job a target does, which names its line in issue 31's table. */
export type Job = 'single' | 'batch' | 'overload' | 'other';

export interface Target {
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

export interface Fleets {
  herald: DeliveryTracker;
  raw: DeliveryTracker;
  sio: DeliveryTracker;
  centrifugo: DeliveryTracker[];
}

/**
 * Every way of delivering to the N connected recipients, each with its own tracker. The design
 * floor rows reach the raw ws fleet through DESIGN.md's three-process shape with none of Herald's
 * work (baselines/design-floor-relay.ts): what the shape itself costs on this core. Every batch
 * runs twice: at BENCH_BATCH_CONCURRENCY requests in flight, and at BENCH_CONCURRENCY (overload,
 * where issue 31 counts duplicates and 202s).
 */
export function targetsFor(ctx: BenchContext, recipients: string[], trackers: Fleets): Target[] {
  const { config } = ctx;
  const size = config.batchSize;
  const { to, events, closed, notifyOver, notifyBatchOver, pushOver, pushBatchOver, dispatchOver } =
    targetOps(ctx, recipients);
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
      load: closed(pushOver(ctx.http.rawWs), 1),
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
      load: closed(pushOver(ctx.http.socketIo), 1),
    },
    ...batchPair(
      { ...sio, subject: SUBJECTS.socketIoBatch, http: ctx.http.socketIo },
      pushBatchOver(ctx.http.socketIo),
    ),
  ];
}

import { performance } from 'node:perf_hooks';
import { FLOOR_DISPATCH_SUBJECT } from '../baselines/names.js';
import type { Poster } from '../load/http-poster.js';
import { closedLoop, type LoopResult } from '../load/pace.js';
import type { Role } from '../report/results.js';
import { type BenchContext, MAX_OPS_PER_SEC } from './context.js';
import { PROCESSES } from './cpu-meter.js';
import type { DeliveryCounter } from './delivery-counter.js';
import {
  dispatchSubject,
  expectBatch,
  notifyBatchBody,
  notifyBody,
  pushBody,
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

export interface Target {
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

export interface Counters {
  herald: DeliveryCounter;
  raw: DeliveryCounter;
  sio: DeliveryCounter;
}

/**
 * The eight ways of delivering to the N connected recipients, each with its own counter. The two
 * design-floor rows reach the raw ws fleet through DESIGN.md's three-process shape with none of
 * Herald's work (baselines/design-floor-relay.ts): what the shape itself costs on this core.
 */
export function targetsFor(ctx: BenchContext, recipients: string[], counters: Counters): Target[] {
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

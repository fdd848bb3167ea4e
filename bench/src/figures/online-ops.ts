import { performance } from 'node:perf_hooks';
import type { Poster } from '../load/http-poster.js';
import { closedLoop } from '../load/pace.js';
import { type BenchContext, MAX_OPS_PER_SEC } from './context.js';
import {
  batchOutcome,
  notifyBatchBody,
  notifyBody,
  pushBatchBody,
  pushBody,
} from './herald-wire.js';

/** How the events of one request were answered: sent live, or stored (202). */
export interface Answer {
  sent: number;
  stored: number;
}

/**
 * How figure 2's targets send to the N connected recipients: event `seq` goes to recipient
 * `seq % N`, and each op sends the events numbered from `seq` (one, or a batch of
 * BENCH_BATCH_SIZE) and says how they were answered.
 */
export function targetOps(ctx: BenchContext, recipients: readonly string[]) {
  const { config } = ctx;
  const n = recipients.length;
  const to = (seq: number) => recipients[seq % n] as string;
  const size = config.batchSize;
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
  return {
    to,
    events,
    closed,
    /** `POST /notify` with Herald's body, to Herald's ingress or the design floor's relay. */
    notifyOver: (http: Poster) => (seq: number) =>
      one(http.post('/notify', notifyBody(ctx.stack, to(seq), ctx.payload.make(seq)))),
    notifyBatchOver: (http: Poster) => async (seq: number) =>
      batchOutcome(await http.post('/notify/batch', notifyBatchBody(ctx.stack, events(seq))), size),
    /** `POST /push` of the raw ws server and of Socket.IO's. */
    pushOver: (http: Poster) => (seq: number) =>
      one(http.post('/push', pushBody(to(seq), ctx.payload.make(seq)))),
    pushBatchOver: (http: Poster) => async (seq: number) =>
      batchOutcome(await http.post('/push/batch', pushBatchBody(events(seq))), size),
    /** The same body as a NATS request, answered with the HTTP body plus `http_status`. */
    dispatchOver: (subject: string) => async (seq: number) => {
      const reply = await ctx.nc.request(
        subject,
        notifyBody(ctx.stack, to(seq), ctx.payload.make(seq)),
        { timeout: 5000 },
      );
      const body = JSON.parse(reply.string()) as { http_status?: number };
      if (body.http_status !== 200)
        throw new Error(`${subject} replied ${reply.string().slice(0, 200)}`);
      return { sent: 1, stored: 0 };
    },
  };
}

import { randomUUID } from 'node:crypto';
import type { PusherApp } from '../env/herald-stack.js';
import type { PostResult } from '../load/http-poster.js';
import { WsFleet } from '../load/ws-fleet.js';
import type { RowCollector } from '../report/results.js';
import { type BenchContext, HANDSHAKE_TIMEOUT_MS } from './context.js';
import { meterCpu } from './cpu-meter.js';
import { DeliveryTracker } from './delivery-tracker.js';
import { notifyBody } from './herald-wire.js';
import { type Answer, targetOps } from './online-ops.js';
import type { Target } from './online-targets.js';
import { measureWindow, type WindowResult } from './online-window.js';
import { publishSide } from './publish-side.js';
import { mean, pooledPerEventUs } from './push-wire.js';
import {
  publicChannel,
  pusherFrames,
  pusherHandshake,
  pusherUrl,
  triggerRequest,
  userEventRequest,
} from './pusher-wire.js';

/** Figure 9's subjects, as its rows name them. */
export const SUBJECTS = {
  notify: 'Herald POST /notify → /ws/connect sockets',
  sendToUser:
    'Pusher POST /apps/{id}/users/{uid}/events (sendToUser) → /app/{key} sockets signed in as the users',
  trigger:
    'Pusher POST /apps/{id}/events (trigger), a public channel per socket → /app/{key} sockets',
  drainHerald: 'Herald /ws/connect (herald.v1 batch=1, list acks)',
  drainPusher: 'Pusher /app/{key} + pusher:signin (pusher:pong proofs)',
  connectHerald: 'Herald /ws/connect',
  connectPusher: 'Pusher /app/{key} + pusher:signin',
} as const;

/** The processes whose CPU figure 9 splits out beside all of Herald's. */
export const SPLIT = ['ingress-api', 'socket-edge', 'nats-server'] as const;

/** The online metrics at n recipients. */
export const publishMetrics = (n: number) => {
  const at = `${n.toLocaleString('en-US')} recipients`;
  return {
    rate: `online deliveries/s, ${at}`,
    queued: `events to a connected socket answered queued, ${at} (of every event sent)`,
    cpu: `server CPU per online delivery, ${at} (all of Herald)`,
    split: (p: string) => `${p} CPU per online delivery, ${at}`,
  };
};

type Window = WindowResult & { cpuSeconds: number; perProcess: Record<string, number> };

interface Side {
  subject: string;
  /** Its name in the run's log line. */
  short: string;
  target: Target;
}

/**
 * A durable event's answer: sent, or queued (`/notify`'s 202; the Pusher API's 200 with
 * `X-Herald-Status: queued`, when no socket proved it within ingress's wait). A queued event
 * still reaches its socket, through the queue, and is counted when it does.
 */
const durable = (r: PostResult): Answer => {
  if (r.status === 202) return { sent: 0, stored: 1 };
  if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${r.text.slice(0, 200)}`);
  return r.headers?.['x-herald-status'] === 'queued'
    ? { sent: 0, stored: 1 }
    : { sent: 1, stored: 0 };
};

/** A live fan-out's answer (`trigger`): 200, nothing stored. */
const fanOut = (r: PostResult): Answer => {
  if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${r.text.slice(0, 200)}`);
  return { sent: 1, stored: 0 };
};

/**
 * Figure 9's online publish: figure 2's harness (a socket per recipient, a closed loop at
 * BENCH_CONCURRENCY, deliveries counted by sequence number until the last arrived, all of
 * Herald's CPU over the window), three sides in each run: `POST /notify` to N `/ws/connect`
 * sockets; `sendToUser`'s `POST /apps/{id}/users/{uid}/events` to N `/app/{key}` sockets signed in
 * as those users (each proved by the client's `pusher:pong`, as pusher-js answers); and `trigger`
 * to a public channel each of the same Pusher sockets subscribed (one delivery per request, live
 * fan-out, at most once). Sides run in mirrored order (a b c c b a, reversed the next run), each
 * side's two windows pooled.
 */
export class PusherPublish {
  readonly #ctx: BenchContext;
  readonly #app: PusherApp;
  readonly #rows: RowCollector;
  readonly #notes: string[];
  readonly #n: number;
  readonly #fleets: WsFleet[] = [];
  readonly #sides: Side[] = [];
  #seq = 0;

  constructor(ctx: BenchContext, app: PusherApp, rows: RowCollector, notes: string[]) {
    this.#ctx = ctx;
    this.#app = app;
    this.#rows = rows;
    this.#notes = notes;
    this.#n = ctx.config.recipients[0] ?? 1;
  }

  /** Connects both fleets (the Pusher one signed in and subscribed) and warms every side. */
  async setup(): Promise<void> {
    const ctx = this.#ctx;
    const n = this.#n;
    const heraldRecipients = Array.from({ length: n }, () => randomUUID());
    const herald = publishSide(ctx, SUBJECTS.notify, ctx.stack, heraldRecipients);
    const users = Array.from({ length: n }, () => randomUUID());
    const tracker = new DeliveryTracker();
    const pusher = new WsFleet({
      tls: ctx.tls,
      addresses: ctx.addresses,
      concurrency: ctx.config.connectConcurrency,
      handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
      url: () => pusherUrl(ctx.stack, this.#app),
      handshake: pusherHandshake(this.#app, (i) => users[i] as string, publicChannel),
      onMessage: pusherFrames((_i, seq) => tracker.hit(seq)),
    });
    this.#fleets.push(herald.fleet, pusher);
    const { closed, to } = targetOps(ctx, users);
    const notify = targetOps(ctx, heraldRecipients);
    const http = ctx.http.ingress;
    const pusherTarget = (
      subject: string,
      short: string,
      op: (seq: number) => Promise<Answer>,
    ): Side => ({
      subject,
      short,
      target: { ...herald.target, subject, tracker, load: closed(op, 1) },
    });
    this.#sides.push(
      {
        subject: SUBJECTS.notify,
        short: '/notify',
        target: {
          ...herald.target,
          // figure 2's op, with a 202 (queued) counted rather than failed, as the Pusher side's.
          load: notify.closed(
            async (seq) =>
              durable(
                await http.post(
                  '/notify',
                  notifyBody(ctx.stack, notify.to(seq), ctx.payload.make(seq)),
                ),
              ),
            1,
          ),
        },
      },
      pusherTarget(SUBJECTS.sendToUser, 'sendToUser', async (seq) =>
        durable(await http.post(...userEventRequest(this.#app, to(seq), ctx.payload.make(seq)))),
      ),
      pusherTarget(SUBJECTS.trigger, 'trigger', async (seq) =>
        fanOut(
          await http.post(
            ...triggerRequest(this.#app, publicChannel(seq % n), ctx.payload.make(seq)),
          ),
        ),
      ),
    );
    ctx.log(`figure 9: ${n} /ws/connect sockets and ${n} signed-in Pusher sockets`);
    for (const [name, fleet] of [
      ['/ws/connect', herald.fleet],
      ['/app/{key}', pusher],
    ] as const) {
      const out = await fleet.grow(n);
      if (out.failed > 0)
        throw new Error(`figure 9 ${name}: ${out.failed} of ${n} failed: ${out.firstError}`);
    }
    if (ctx.config.warmupMs <= 0) return;
    for (const s of this.#sides) await this.#window(s, ctx.config.warmupMs);
  }

  /** Run `run` (0-based): every side twice in mirrored order, each side's windows pooled. */
  async run(run: number): Promise<string> {
    const m = publishMetrics(this.#n);
    const order = run % 2 === 0 ? [...this.#sides] : [...this.#sides].reverse();
    const windows = new Map<Side, Window[]>(this.#sides.map((s) => [s, []]));
    for (const s of [...order, ...[...order].reverse()]) {
      await this.#ctx.http.ingress.warm();
      const w = await this.#window(s, this.#ctx.config.measureMs);
      windows.get(s)?.push(w);
      if (w.lost > 0 || w.failed > 0 || w.duplicates > 0)
        this.#notes.push(
          `${s.subject}, run ${run + 1}: ${w.failed} failed requests, ${w.lost} deliveries missing, ${w.duplicates} delivered twice${w.firstError ? ` (${w.firstError})` : ''}`,
        );
    }
    const line: string[] = [];
    for (const [s, ws] of windows) {
      const us = (seconds: (w: Window) => number) =>
        pooledPerEventUs(ws.map((w) => ({ delivered: w.delivered, seconds: seconds(w) })));
      const rate = mean(ws.map((w) => w.rate));
      const cpu = us((w) => w.cpuSeconds);
      const sent = ws.reduce((a, w) => a + w.used, 0);
      const queued = ws.reduce((a, w) => a + w.stored, 0);
      this.#rows.add(m.queued, s.subject, 'herald', '%', (100 * queued) / Math.max(1, sent));
      this.#rows.add(m.rate, s.subject, 'herald', 'deliveries/s', rate);
      this.#rows.add(m.cpu, s.subject, 'herald', 'µs', cpu);
      for (const p of SPLIT)
        this.#rows.add(
          m.split(p),
          s.subject,
          'herald',
          'µs',
          us((w) => w.perProcess[p] ?? 0),
        );
      line.push(
        `${s.short} ${Math.round(rate)}/s ${Math.round(cpu)} µs ${Math.round((100 * queued) / Math.max(1, sent))}% queued`,
      );
    }
    return line.join(', ');
  }

  /** Closes both fleets (once: the figure closes them before its drains, and again on failure). */
  async close(): Promise<void> {
    await Promise.all(this.#fleets.splice(0).map((f) => f.close()));
  }

  async #window(s: Side, windowMs: number): Promise<Window> {
    const { result, cpuSeconds, perProcess } = await meterCpu(
      this.#ctx.servers,
      s.target.processes,
      () => measureWindow(s.target, windowMs, this.#seq),
    );
    this.#seq += result.used;
    return { ...result, cpuSeconds, perProcess };
  }
}

import { randomUUID } from 'node:crypto';
import type { HeraldStack } from '../env/herald-stack.js';
import { cpuSnapshot } from '../env/process-cpu.js';
import type { WsFleet } from '../load/ws-fleet.js';
import type { BenchContext } from './context.js';
import { PROCESSES } from './cpu-meter.js';
import type { Target } from './online-targets.js';
import { measureWindow, type WindowResult } from './online-window.js';
import { cpuUsed, publishSide } from './publish-side.js';
import {
  type PushOut,
  type PushSide,
  SUBJECTS,
  settlePush,
  subscribedRecipients,
} from './push-side.js';
import { abbaOrder, mean, pooledPerEventUs } from './push-wire.js';
import { PUBLISH_PATH } from './webhook-publish-cost.js';

/** The metrics of the A/B pair at n recipients. */
export const abMetrics = (n: number) => {
  const at = `${n.toLocaleString('en-US')} recipients`;
  return {
    rate: `deliveries/s, ${at}`,
    publishWindow: `server CPU per event, ${at}: the publish path (${PUBLISH_PATH.join(', ')}), first request to last frame`,
    publishPath: `server CPU per event, ${at}: the publish path (${PUBLISH_PATH.join(', ')}), until the pipeline settled`,
    cpu: `server CPU per event, ${at}, until the pipeline settled (all of Herald)`,
    status: `server CPU per event, ${at}: status, until the pipeline settled`,
  };
};

type Window = WindowResult & {
  cpuSeconds: number;
  perProcess: Record<string, number>;
  publishWindow: Record<string, number>;
};

interface Side {
  subject: string;
  target: Target;
  fleet: WsFleet;
}

/**
 * Figure 8's A/B: `POST /notify` with figure 2's harness (a socket per recipient, closed loop at
 * BENCH_CONCURRENCY, the same window and delivery counting), side by side in each run: a key of an
 * account without push (off), and the same load through a key not opted in to push of an account
 * whose push is configured (a VAPID key; every recipient has a Web Push subscription) (on). Each window
 * is metered from the first request to the last frame (the publish path's share) and until the
 * status pipeline settled (all of Herald); the order alternates from run to run. No push may
 * arrive from either side: a key without `--push-after-ms` never pushes.
 */
export class PushPublishCost {
  readonly #ctx: BenchContext;
  readonly #push: PushSide;
  readonly #out: PushOut;
  readonly #n: number;
  readonly #sides: Side[] = [];
  #seq = 0;

  constructor(ctx: BenchContext, push: PushSide, out: PushOut) {
    this.#ctx = ctx;
    this.#push = push;
    this.#out = out;
    this.#n = ctx.config.recipients[0] ?? 1;
  }

  /** Subscribes the on side's recipients, connects both fleets and warms both paths. */
  async setup(): Promise<void> {
    const ctx = this.#ctx;
    ctx.log(`figure 8: ${this.#n} subscribed recipients, and ${this.#n} sockets on each side`);
    const onRecipients = await subscribedRecipients(
      ctx,
      this.#push.plainKey,
      this.#push.service,
      this.#n,
    );
    const offRecipients = Array.from({ length: this.#n }, () => randomUUID());
    this.#sides.push(
      this.#side(SUBJECTS.off, ctx.stack, offRecipients),
      this.#side(SUBJECTS.on, this.#push.plainKey, onRecipients),
    );
    for (const s of this.#sides) {
      const out = await s.fleet.grow(this.#n);
      if (out.failed > 0)
        throw new Error(
          `${s.subject}: ${out.failed} of ${this.#n} connects failed: ${out.firstError}`,
        );
    }
    if (ctx.config.warmupMs <= 0) return;
    for (const s of this.#sides) await this.#window(s, ctx.config.warmupMs, 'warm-up');
  }

  /**
   * Run `run` (0-based): each side twice, in ABBA order (off, on, on, off; the next run on, off,
   * off, on), each side's two windows pooled (CPU over deliveries): the second window of a pair
   * was measured dearer than the first, whichever side it was (docs/benchmarks-history.md,
   * "Figure 8"), and ABBA cancels that within each run.
   */
  async run(run: number): Promise<string> {
    const { rows, notes } = this.#out;
    const m = abMetrics(this.#n);
    const [a, b] = this.#sides as [Side, Side];
    const windows = new Map<Side, Window[]>([
      [a, []],
      [b, []],
    ]);
    for (const s of abbaOrder(a, b, run)) {
      await this.#ctx.http.ingress.warm();
      const w = await this.#window(s, this.#ctx.config.measureMs, `run ${run + 1}`);
      windows.get(s)?.push(w);
      if (w.lost > 0 || w.failed > 0 || w.duplicates > 0)
        notes.push(
          `${s.subject}, run ${run + 1}: ${w.failed} failed requests, ${w.lost} deliveries missing, ${w.duplicates} delivered twice${w.firstError ? ` (${w.firstError})` : ''}`,
        );
    }
    const line: string[] = [];
    for (const [s, ws] of windows) {
      const us = (seconds: (w: Window) => number) =>
        pooledPerEventUs(ws.map((w) => ({ delivered: w.delivered, seconds: seconds(w) })));
      const path = (p: Record<string, number>) =>
        PUBLISH_PATH.reduce((sum, name) => sum + (p[name] ?? 0), 0);
      const publish = us((w) => path(w.publishWindow));
      rows.add(m.rate, s.subject, 'herald', 'deliveries/s', mean(ws.map((w) => w.rate)));
      rows.add(m.publishWindow, s.subject, 'herald', 'µs', publish);
      rows.add(
        m.publishPath,
        s.subject,
        'herald',
        'µs',
        us((w) => path(w.perProcess)),
      );
      rows.add(
        m.cpu,
        s.subject,
        'herald',
        'µs',
        us((w) => w.cpuSeconds),
      );
      rows.add(
        m.status,
        s.subject,
        'herald',
        'µs',
        us((w) => w.perProcess.status ?? 0),
      );
      line.push(`${s.subject === SUBJECTS.on ? 'on' : 'off'} ${Math.round(publish)} µs/event`);
    }
    return `publish path ${line.join(', ')}`;
  }

  /** Closes both fleets (once: the figure closes them before its backlog, and again on failure). */
  async close(): Promise<void> {
    await Promise.all(this.#sides.splice(0).map((s) => s.fleet.close()));
  }

  /**
   * One window of a side, metered twice: every Herald process until the status pipeline settled,
   * and the publish path from the first request to the last frame (figure 2's window).
   */
  async #window(s: Side, windowMs: number, what: string): Promise<Window> {
    const ctx = this.#ctx;
    const watched = ctx.servers.filter((p) =>
      (PROCESSES.herald as readonly string[]).includes(p.name),
    );
    const pushesBefore = this.#push.service.arrivals().length;
    const before = await cpuSnapshot(watched);
    const w = await measureWindow(s.target, windowMs, this.#seq);
    const delivered = await cpuSnapshot(watched);
    await settlePush(ctx, this.#push, this.#out.notes, `${s.subject}, ${what}`);
    const after = await cpuSnapshot(watched);
    this.#seq += w.used;
    const pushes = this.#push.service.arrivals().length - pushesBefore;
    if (pushes > 0)
      this.#out.notes.push(
        `${s.subject}, ${what}: ${pushes} pushes arrived from a key without push`,
      );
    const perProcess = cpuUsed(before, after);
    return {
      ...w,
      cpuSeconds: Object.values(perProcess).reduce((a, b) => a + b, 0),
      perProcess,
      publishWindow: cpuUsed(before, delivered),
    };
  }

  #side(subject: string, stack: HeraldStack, recipients: string[]): Side {
    return publishSide(this.#ctx, subject, stack, recipients);
  }
}

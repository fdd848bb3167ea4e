import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { closedLoop, openLoop } from '../load/pace.js';
import { summarize } from '../stats.js';
import type { BenchContext } from './context.js';
import { meterCpu, PROCESSES } from './cpu-meter.js';
import { notifyBatchBody, notifyBody } from './herald-wire.js';
import { SUBJECTS, settleWindow, type WebhookOut, type WebhookSide } from './webhook-side.js';

/** Recipients nobody connects: each event is answered 202, one `event.queued` message each. */
const OFFLINE_RECIPIENTS = 1000;
/** Longest the backlog's requests may take to be sent, ms (a bound on the loop, never reached). */
const BACKLOG_POST_MS = 600_000;

/**
 * Figure 7's sender, over the account whose endpoint takes every type, with events to recipients
 * nobody connected (each answered 202: one `event.queued` transition, one message, at acceptance).
 * Throughput: BENCH_WEBHOOK_BACKLOG events stored at once through `POST /notify/batch`, and the
 * sender works off their messages; webhooks/s from the first arrival to the last. Then lag at a
 * steady rate below that (BENCH_WEBHOOK_LOAD of it): `POST /notify` open loop for 2 × the window,
 * each message timed from its event's 202 to its arrival. Both count the CPU of every Herald
 * process until the pipeline settled, per message: the status service's (writer and sender), and
 * all of Herald's, where the events' intake (ingress, JetStream) is included.
 */
export class WebhookBacklog {
  readonly #ctx: BenchContext;
  readonly #side: WebhookSide;
  readonly #out: WebhookOut;
  readonly #recipients = Array.from({ length: OFFLINE_RECIPIENTS }, () => randomUUID());
  #seq = 0;

  constructor(ctx: BenchContext, side: WebhookSide, out: WebhookOut) {
    this.#ctx = ctx;
    this.#side = side;
    this.#out = out;
  }

  get #loadLabel(): string {
    return `@ ${Math.round(100 * this.#ctx.config.webhookLoad)}% of the backlog's webhooks/s`;
  }

  /** Run `run` (0-based): the backlog, then the steady rate at a fraction of its throughput. */
  async run(run: number): Promise<void> {
    const throughput = await this.#backlog(run);
    if (!(throughput > 0)) {
      this.#out.notes.push(`run ${run + 1}: no backlog rate, so no steady-rate window`);
      return;
    }
    await this.#steady(run, this.#ctx.config.webhookLoad * throughput);
  }

  async #backlog(run: number): Promise<number> {
    const ctx = this.#ctx;
    const { config } = ctx;
    const { tracker } = this.#side;
    const total = config.webhookBacklog;
    const size = config.batchSize;
    const what = `backlog of ${total.toLocaleString('en-US')}, run ${run + 1}`;
    await ctx.http.ingress.warm();
    tracker.start({ lag: true });
    let lastAccepted = 0;
    const start = performance.now();
    const { result: loop, ...cpu } = await meterCpu(ctx.servers, PROCESSES.herald, async () => {
      const loop = await closedLoop(
        config.batchConcurrency,
        { durationMs: BACKLOG_POST_MS, maxCount: Math.ceil(total / size) },
        async (i) => {
          const events = Array.from({ length: Math.min(size, total - i * size) }, () =>
            this.#next(),
          );
          const r = await ctx.http.ingress.post(
            '/notify/batch',
            notifyBatchBody(this.#side.stack, events),
          );
          const at = performance.now();
          for (const id of queuedIds(r, events.length)) tracker.accepted(id, at);
          lastAccepted = at;
        },
      );
      await settleWindow(ctx, this.#side, this.#side.endpoint, this.#out.notes, what);
      return loop;
    });
    tracker.close();
    const span = (tracker.lastAt - tracker.firstAt) / 1000;
    const rate = tracker.received > 1 && span > 0 ? (tracker.received - 1) / span : Number.NaN;
    this.#add(`webhooks/s, a backlog of ${total.toLocaleString('en-US')}`, 'webhooks/s', rate);
    this.#perMessage('backlog', cpu, tracker.received);
    this.#problems(what, total, loop.failed, loop.firstError);
    if (tracker.received > 1 && lastAccepted - start > 0.5 * (tracker.lastAt - tracker.firstAt))
      this.#out.notes.push(
        `${what}: storing the events took ${((lastAccepted - start) / 1000).toFixed(1)} s of the ${span.toFixed(1)} s the messages arrived over, so the sender was not the only bound`,
      );
    return rate;
  }

  async #steady(run: number, rate: number): Promise<void> {
    const ctx = this.#ctx;
    const { tracker } = this.#side;
    const windowMs = 2 * ctx.config.measureMs;
    const count = Math.max(1, Math.floor((windowMs / 1000) * rate));
    const what = `steady rate ${this.#loadLabel}, run ${run + 1}`;
    await ctx.http.ingress.warm();
    tracker.start({ lag: true });
    const { result: loop, ...cpu } = await meterCpu(ctx.servers, PROCESSES.herald, async () => {
      const loop = await openLoop(rate, { durationMs: windowMs, maxCount: count }, async () => {
        const e = this.#next();
        const r = await ctx.http.ingress.post(
          '/notify',
          notifyBody(this.#side.stack, e.recipient, e.payloadJson),
        );
        const at = performance.now();
        if (r.status !== 202) throw new Error(`HTTP ${r.status}: ${r.text.slice(0, 200)}`);
        tracker.accepted((JSON.parse(r.text) as { id: string }).id, at);
      });
      await settleWindow(ctx, this.#side, this.#side.endpoint, this.#out.notes, what);
      return loop;
    });
    tracker.close();
    const lag = summarize(tracker.lagsMs);
    this.#add(`steady rate ${this.#loadLabel}`, 'events/s', rate);
    this.#add(`lag p50, 202 → receiver, ${this.#loadLabel}`, 'ms', lag.p50);
    this.#add(`lag p99, 202 → receiver, ${this.#loadLabel}`, 'ms', lag.p99);
    this.#perMessage(this.#loadLabel, cpu, tracker.received);
    this.#problems(what, count, loop.failed, loop.firstError);
    if (loop.behindMs > 5)
      this.#out.notes.push(
        `${what}: the generator fell ${loop.behindMs.toFixed(0)} ms behind its schedule`,
      );
  }

  #next(): { recipient: string; payloadJson: string } {
    const seq = this.#seq++;
    return {
      recipient: this.#recipients[seq % OFFLINE_RECIPIENTS] as string,
      payloadJson: this.#ctx.payload.make(seq),
    };
  }

  #add(metric: string, unit: string, value: number): void {
    this.#out.rows.add(metric, SUBJECTS.sender, 'herald', unit, value);
  }

  /** The status service's CPU per message, and all of Herald's (the events' intake included). */
  #perMessage(
    label: string,
    cpu: { cpuSeconds: number; perProcess: Record<string, number> },
    messages: number,
  ): void {
    const per = (s: number) => (messages > 0 ? (1e6 * s) / messages : Number.NaN);
    this.#add(`status CPU per webhook, ${label}`, 'µs', per(cpu.perProcess.status ?? Number.NaN));
    this.#add(
      `server CPU per webhook, ${label} (all of Herald, the events' intake included)`,
      'µs',
      per(cpu.cpuSeconds),
    );
  }

  #problems(what: string, expected: number, failed: number, firstError?: string): void {
    const t = this.#side.tracker;
    if (t.received < expected || failed > 0 || t.duplicates > 0 || t.late > 0)
      this.#out.notes.push(
        `${what}: ${t.received} of ${expected} messages arrived, ${failed} failed requests, ${t.duplicates} duplicates, ${t.late} of earlier windows${firstError ? ` (${firstError})` : ''}`,
      );
  }
}

/** The ids of a batch answer's events, each of which must have been stored (202). */
export function queuedIds(r: { status: number; text: string }, size: number): string[] {
  if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${r.text.slice(0, 200)}`);
  const { results } = JSON.parse(r.text) as {
    results: Array<{ http_status: number; id?: string }>;
  };
  if (results.length !== size) throw new Error(`${results.length} results for ${size} events`);
  return results.map((x) => {
    if (x.http_status !== 202 || x.id === undefined)
      throw new Error(`an event answered ${JSON.stringify(x).slice(0, 200)}`);
    return x.id;
  });
}

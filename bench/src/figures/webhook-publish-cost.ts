import { randomUUID } from 'node:crypto';
import type { HeraldStack } from '../env/herald-stack.js';
import { cpuSnapshot } from '../env/process-cpu.js';
import type { WsFleet } from '../load/ws-fleet.js';
import type { BenchContext } from './context.js';
import { PROCESSES } from './cpu-meter.js';
import type { Target } from './online-targets.js';
import { measureWindow } from './online-window.js';
import { cpuUsed, publishSide } from './publish-side.js';
import { SUBJECTS, settleWindow, type WebhookOut, type WebhookSide } from './webhook-side.js';

/**
 * The processes `POST /notify` itself runs on: what a sender's publish costs, apart from the status
 * pipeline (status, Postgres) that records it and, with webhooks on, sends them.
 */
export const PUBLISH_PATH = ['ingress-api', 'socket-edge', 'auth', 'nats-server'] as const;

/** The metrics of the on/off pair at n recipients. */
export const pairMetrics = (n: number) => {
  const at = `${n.toLocaleString('en-US')} recipients`;
  return {
    rate: `deliveries/s, ${at}`,
    cpu: `server CPU per event, ${at}, until the pipeline settled`,
    process: (name: string) => `server CPU per event, ${at}: ${name}`,
    publishPath: `server CPU per event, ${at}: the publish path (${PUBLISH_PATH.join(', ')}), until the pipeline settled`,
    publishWindow: `server CPU per event, ${at}: the publish path (${PUBLISH_PATH.join(', ')}), first request to last frame`,
    webhooks: `webhooks per event, ${at}`,
    perWebhook: `Herald CPU per webhook, ${at}, from the on/off pair`,
  };
};

interface Side {
  subject: string;
  target: Target;
  fleet: WsFleet;
  /** The endpoint whose messages a window waits for; none with webhooks off. */
  endpoint?: string;
}

/**
 * Figure 7's cost to `POST /notify`, with figure 2's harness (the same sockets per recipient,
 * closed loop at BENCH_CONCURRENCY, the same window and delivery counting), on two accounts side by
 * side in each run: one with no endpoint (off), one whose endpoint takes every type (on). Each
 * window runs until the pipeline settled (status records written, and with webhooks on every
 * message answered), so both sides count all the work their events caused; which side goes first
 * alternates from run to run.
 */
export class PublishCost {
  readonly #ctx: BenchContext;
  readonly #webhooks: WebhookSide;
  readonly #out: WebhookOut;
  readonly #n: number;
  readonly #sides: Side[];
  #seq = 0;

  constructor(ctx: BenchContext, webhooks: WebhookSide, out: WebhookOut) {
    this.#ctx = ctx;
    this.#webhooks = webhooks;
    this.#out = out;
    this.#n = ctx.config.recipients[0] ?? 1;
    this.#sides = [
      this.#side(SUBJECTS.off, ctx.stack),
      { ...this.#side(SUBJECTS.on, webhooks.stack), endpoint: webhooks.endpoint },
    ];
  }

  /** Connects both fleets and warms both paths (JIT, key caches, keep-alive), as figure 2 does. */
  async setup(): Promise<void> {
    const ctx = this.#ctx;
    ctx.log(`figure 7: connecting ${this.#n} sockets to each of the two accounts`);
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

  /** Run `run` (0-based): both sides, the order alternating. */
  async run(run: number): Promise<string[]> {
    const { rows, notes } = this.#out;
    const m = pairMetrics(this.#n);
    const order = run % 2 === 0 ? this.#sides : [...this.#sides].reverse();
    const cpu = new Map<string, number>();
    let perEvent = Number.NaN;
    const line: string[] = [];
    for (const s of order) {
      await this.#ctx.http.ingress.warm();
      const w = await this.#window(s, this.#ctx.config.measureMs, `run ${run + 1}`);
      const delivered = Math.max(1, w.delivered);
      const cpuUs = (1e6 * w.cpuSeconds) / delivered;
      cpu.set(s.subject, cpuUs);
      rows.add(m.rate, s.subject, 'herald', 'deliveries/s', w.rate);
      rows.add(m.cpu, s.subject, 'herald', 'µs', cpuUs);
      const path = PUBLISH_PATH.reduce((sum, name) => sum + (w.perProcess[name] ?? 0), 0);
      rows.add(m.publishPath, s.subject, 'herald', 'µs', (1e6 * path) / delivered);
      const own = PUBLISH_PATH.reduce((sum, name) => sum + (w.publishWindow[name] ?? 0), 0);
      rows.add(m.publishWindow, s.subject, 'herald', 'µs', (1e6 * own) / delivered);
      for (const name of PROCESSES.herald)
        rows.add(
          m.process(name),
          s.subject,
          'herald',
          'µs',
          (1e6 * (w.perProcess[name] ?? 0)) / delivered,
        );
      if (s.endpoint !== undefined) {
        perEvent = w.webhooks / delivered;
        rows.add(m.webhooks, s.subject, 'herald', 'webhooks', perEvent);
      }
      line.push(`${s.subject === SUBJECTS.on ? 'on' : 'off'} ${Math.round(cpuUs)} µs/event`);
      if (w.lost > 0 || w.failed > 0 || w.duplicates > 0)
        notes.push(
          `${s.subject}, run ${run + 1}: ${w.failed} failed requests, ${w.lost} deliveries missing, ${w.duplicates} delivered twice${w.firstError ? ` (${w.firstError})` : ''}`,
        );
    }
    const extra = (cpu.get(SUBJECTS.on) ?? Number.NaN) - (cpu.get(SUBJECTS.off) ?? Number.NaN);
    rows.add(
      m.perWebhook,
      SUBJECTS.sender,
      'herald',
      'µs',
      perEvent > 0 ? extra / perEvent : Number.NaN,
    );
    return line;
  }

  async close(): Promise<void> {
    await Promise.all(this.#sides.map((s) => s.fleet.close()));
  }

  /**
   * One window of a side, metered twice: every Herald process until the pipeline settled, and the
   * publish path from the first request to the last frame (figure 2's window for `POST /notify`),
   * which is what the webhooks may cost the publish itself: the sender's own work is the tail.
   */
  async #window(s: Side, windowMs: number, what: string) {
    const ctx = this.#ctx;
    const tracker = this.#webhooks.tracker;
    const watched = ctx.servers.filter((p) =>
      (PROCESSES.herald as readonly string[]).includes(p.name),
    );
    const before = await cpuSnapshot(watched);
    tracker.start({ lag: false });
    const w = await measureWindow(s.target, windowMs, this.#seq);
    const delivered = await cpuSnapshot(watched);
    await settleWindow(ctx, this.#webhooks, s.endpoint, this.#out.notes, `${s.subject}, ${what}`);
    tracker.close();
    const after = await cpuSnapshot(watched);
    this.#seq += w.used;
    if (s.endpoint === undefined && tracker.received > 0)
      this.#out.notes.push(
        `${s.subject}, ${what}: ${tracker.received} webhooks arrived with webhooks off`,
      );
    const perProcess = cpuUsed(before, after);
    return {
      ...w,
      webhooks: tracker.received,
      webhookDuplicates: tracker.duplicates,
      cpuSeconds: Object.values(perProcess).reduce((a, b) => a + b, 0),
      perProcess,
      publishWindow: cpuUsed(before, delivered),
    };
  }

  #side(subject: string, stack: HeraldStack): Omit<Side, 'endpoint'> {
    const recipients = Array.from({ length: this.#n }, () => randomUUID());
    return publishSide(this.#ctx, subject, stack, recipients);
  }
}

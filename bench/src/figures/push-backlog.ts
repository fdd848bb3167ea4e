import { closedLoop, waitUntil } from '../load/pace.js';
import { summarize } from '../stats.js';
import type { BenchContext } from './context.js';
import { meterCpu, PROCESSES } from './cpu-meter.js';
import { notifyBatchBody } from './herald-wire.js';
import { type PushOut, type PushSide, SUBJECTS, settlePush } from './push-side.js';
import { arrivalRate, idsOfMessage, pushLagsMs } from './push-wire.js';
import { queuedIds } from './webhook-backlog.js';

/** Longest the backlog's requests may take to be sent, ms (a bound on the loop, never reached). */
const BACKLOG_POST_MS = 600_000;
/** How often the push service's arrivals are counted while a window waits for them, ms. */
const POLL_MS = 20;

/**
 * Figure 8's sender: BENCH_PUSH_BACKLOG recipients, each with one Web Push subscription and nobody
 * connected, get one event each at once through `POST /notify/batch` with the `--push-after-ms`
 * key; no socket proves them, so each falls due BENCH_PUSH_AFTER_MS after its 202 and the status
 * service pushes it (VAPID-signed, aes128gcm) to the test push service, which decrypts and checks
 * every one. Pushes/s from the first arrival to the last; the status service's CPU per push and
 * all of Herald's (the events' intake included), until the pipeline settled; each event's lag
 * from its 202 to its push's arrival (BENCH_PUSH_AFTER_MS and the sender's coalescing wait in it).
 */
export class PushBacklog {
  readonly #ctx: BenchContext;
  readonly #side: PushSide;
  readonly #out: PushOut;
  readonly #recipients: readonly string[];
  #seq = 0;

  constructor(ctx: BenchContext, side: PushSide, out: PushOut, recipients: readonly string[]) {
    this.#ctx = ctx;
    this.#side = side;
    this.#out = out;
    this.#recipients = recipients;
  }

  async run(run: number): Promise<string> {
    const ctx = this.#ctx;
    const { config } = ctx;
    const service = this.#side.service;
    const total = this.#recipients.length;
    const size = config.batchSize;
    const what = `backlog of ${total.toLocaleString('en-US')} pushes, run ${run + 1}`;
    const acceptedAt = new Map<string, number>();
    await ctx.http.ingress.warm();
    const base = service.arrivals().length;
    const start = Date.now();
    let lastAccepted = start;
    const { result: loop, ...cpu } = await meterCpu(ctx.servers, PROCESSES.herald, async () => {
      const loop = await closedLoop(
        config.batchConcurrency,
        { durationMs: BACKLOG_POST_MS, maxCount: Math.ceil(total / size) },
        async (i) => {
          const events = this.#recipients
            .slice(i * size, (i + 1) * size)
            .map((recipient) => ({ recipient, payloadJson: ctx.payload.make(this.#seq++) }));
          const r = await ctx.http.ingress.post(
            '/notify/batch',
            notifyBatchBody(this.#side.pushKey, events),
          );
          const at = Date.now();
          for (const id of queuedIds(r, events.length)) acceptedAt.set(id, at);
          lastAccepted = at;
        },
      );
      await waitUntil(
        () => service.arrivals().length - base >= total,
        config.pushSettleMs,
        POLL_MS,
      );
      await settlePush(ctx, this.#side, this.#out.notes, what);
      return loop;
    });
    const arrivals = service.arrivals().slice(base);
    const ok = arrivals.filter((a) => a.status >= 200 && a.status < 300 && a.error === null);
    const rate = arrivalRate(ok.map((a) => a.at));
    const lag = summarize(
      pushLagsMs(
        ok.map((a) => ({ at: a.at, ids: idsOfMessage(a.message) })),
        acceptedAt,
      ),
    );
    const per = (s: number) => (ok.length > 0 ? (1e6 * s) / ok.length : Number.NaN);
    const label = `a backlog of ${total.toLocaleString('en-US')}, push-after-ms ${config.pushAfterMs}`;
    this.#add(`pushes/s, ${label}`, 'pushes/s', rate);
    this.#add(`status CPU per push, ${label}`, 'µs', per(cpu.perProcess.status ?? Number.NaN));
    this.#add(
      `server CPU per push, ${label} (all of Herald, the events' intake included)`,
      'µs',
      per(cpu.cpuSeconds),
    );
    this.#add(`lag p50, 202 → push service, ${label}`, 'ms', lag.p50);
    this.#add(`lag p99, 202 → push service, ${label}`, 'ms', lag.p99);
    const pushed = new Set(ok.flatMap((a) => idsOfMessage(a.message)));
    const unchecked = arrivals.length - ok.length;
    if (pushed.size < total || unchecked > 0 || loop.failed > 0 || ok.length > total)
      this.#out.notes.push(
        `${what}: ${pushed.size} of ${total} events pushed in ${ok.length} pushes, ${unchecked} pushes refused or failing their checks (${arrivals.find((a) => a.error !== null)?.error ?? 'none'}), ${loop.failed} failed requests${loop.firstError ? ` (${loop.firstError})` : ''}`,
      );
    const span =
      ok.length > 1 ? Math.max(...ok.map((a) => a.at)) - Math.min(...ok.map((a) => a.at)) : 0;
    if (span > 0 && lastAccepted - start > 0.5 * span)
      this.#out.notes.push(
        `${what}: storing the events took ${((lastAccepted - start) / 1000).toFixed(1)} s of the ${(span / 1000).toFixed(1)} s the pushes arrived over, so the sender was not the only bound`,
      );
    return `${Math.round(rate)} pushes/s, status ${Math.round(per(cpu.perProcess.status ?? Number.NaN))} µs/push`;
  }

  #add(metric: string, unit: string, value: number): void {
    this.#out.rows.add(metric, SUBJECTS.sender, 'herald', unit, value);
  }
}

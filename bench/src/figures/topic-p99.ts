import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { openLoop, waitUntil } from '../load/pace.js';
import { WsFleet } from '../load/ws-fleet.js';
import { seqOfFrame } from '../payload.js';
import { SampleBuffer, summarize } from '../stats.js';
import { type BenchContext, HANDSHAKE_TIMEOUT_MS, SETTLE_TIMEOUT_MS } from './context.js';
import { connectUrl, notifyBody } from './herald-wire.js';
import { LatencyProbe } from './latency-probe.js';

/** Connected recipients of the direct events whose p99 figure 10 measures. */
const PROBE_SOCKETS = 20;

/** One window of direct events at the steady rate: their answers' and arrivals' p99. */
export interface DirectWindow {
  sent: number;
  /** `POST /notify` answered 202 (stored, not live): counted apart from the fan-out's copies. */
  stored: number;
  failed: number;
  missing: number;
  answerP99: number;
  arrivalP99: number;
  behindMs: number;
  firstError?: string;
}

/**
 * Direct events to connected recipients at `BENCH_TOPIC_RATE`, open loop, as figure 1's row at a
 * rate: the answer time of each `POST /notify` and the time to its frame at the socket.
 */
export class DirectLoad {
  readonly probe = new LatencyProbe();
  readonly #recipients = Array.from({ length: PROBE_SOCKETS }, () => randomUUID());
  readonly fleet: WsFleet;
  /** 202s of the window in progress, read by the offline fan-out's count. */
  stored = 0;

  constructor(private readonly ctx: BenchContext) {
    this.fleet = new WsFleet({
      // Plain framing (the payload only): the probe reads the sequence number from it.
      url: (i) => connectUrl(ctx.stack, this.#recipients[i] as string),
      tls: ctx.tls,
      addresses: ctx.addresses,
      concurrency: ctx.config.connectConcurrency,
      handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
      onMessage: (_i, data) => this.probe.arrived(seqOfFrame(data)),
    });
  }

  async open(): Promise<void> {
    const o = await this.fleet.grow(PROBE_SOCKETS);
    if (o.opened !== PROBE_SOCKETS)
      throw new Error(`${o.failed} probe sockets failed to open: ${o.firstError}`);
  }

  /** One window of `windowMs`; `during` runs beside it (the fan-out) and is awaited after. */
  async window(windowMs: number, during?: Promise<unknown>): Promise<DirectWindow> {
    const { ctx, probe } = this;
    const rate = ctx.config.topicRate;
    const count = Math.max(1, Math.floor((windowMs / 1000) * rate));
    await ctx.http.ingress.warm();
    const answers = new SampleBuffer(count);
    this.stored = 0;
    const base = probe.start(count);
    const l = this.#recipients.length;
    const loop = await openLoop(rate, { durationMs: windowMs, maxCount: count }, async (i, at) => {
      probe.sent(i, at);
      const r = await ctx.http.ingress.post(
        '/notify',
        notifyBody(ctx.stack, this.#recipients[i % l] as string, ctx.payload.make(base + i)),
      );
      answers.push(performance.now() - at);
      if (r.status === 202) this.stored++;
      else if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${r.text.slice(0, 200)}`);
    });
    const live = loop.completed - this.stored;
    await waitUntil(() => probe.counter.received >= live, SETTLE_TIMEOUT_MS);
    await during;
    return {
      sent: loop.completed,
      stored: this.stored,
      failed: loop.failed,
      missing: Math.max(0, live - probe.counter.received),
      answerP99: summarize(answers.values()).p99,
      arrivalP99: summarize(probe.samples.values()).p99,
      behindMs: loop.behindMs,
      ...(loop.firstError === undefined ? {} : { firstError: loop.firstError }),
    };
  }
}

import type { Poster } from '../load/http-poster.js';
import { openLoop, waitUntil } from '../load/pace.js';
import { declare, type PeerCollector, peerRows, type System } from '../report/peers.js';
import type { RowCollector } from '../report/results.js';
import { summarize } from '../stats.js';
import { publishBody } from './centrifugo-wire.js';
import { type BenchContext, SETTLE_TIMEOUT_MS } from './context.js';
import {
  centrifugoProcesses,
  centrifugoSystem,
  meterCpu,
  PROCESSES,
  perUnitUs,
} from './cpu-meter.js';
import { notifyBody, pushBody } from './herald-wire.js';
import type { LatencyProbe } from './latency-probe.js';
import { SUBJECTS } from './latency-subjects.js';

/** Where figure 1's measurements go. */
export interface LatencyOut {
  rows: RowCollector;
  peers: PeerCollector;
  notes: string[];
}

/**
 * Issue 31's row of figure 1: every system at the same absolute rate (LATENCY_RATE), open loop,
 * over its own sockets (already connected, one per recipient), with the server CPU each delivery
 * cost. Run `run` (0-based) of the figure.
 */
export async function latencyAtRate(
  ctx: BenchContext,
  probe: LatencyProbe,
  recipients: readonly string[],
  out: LatencyOut,
  run: number,
): Promise<void> {
  const { config } = ctx;
  const { rows, peers, notes } = out;
  ctx.checkDeadline();
  const rate = config.latencyRate;
  const windowMs = 2 * config.measureMs;
  const count = Math.max(1, Math.floor((windowMs / 1000) * rate));
  const bounds = { durationMs: windowMs, maxCount: count };
  const row = peerRows(config);
  const atRate = async (
    subject: string,
    role: 'herald' | 'baseline',
    system: System,
    processes: readonly string[],
    http: Poster,
    send: (seq: number) => Promise<{ status: number; text: string }>,
  ) => {
    await http.warm();
    const base = probe.start(count);
    const {
      result: loop,
      cpuSeconds,
      perProcess,
    } = await meterCpu(ctx.servers, processes, async () => {
      const sent = await openLoop(rate, bounds, async (i, at) => {
        probe.sent(i, at);
        const r = await send(base + i);
        if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${r.text.slice(0, 200)}`);
      });
      await waitUntil(() => probe.counter.received >= sent.completed, SETTLE_TIMEOUT_MS);
      return sent;
    });
    const { samples } = probe;
    const s = summarize(samples.values());
    const delivered = Math.max(1, probe.counter.received);
    const cpuUs = (1e6 * cpuSeconds) / delivered;
    const metric = `@ ${rate.toLocaleString('en-US')} events/s`;
    rows.add(`p50 ${metric}`, subject, role, 'ms', s.p50);
    rows.add(`p99 ${metric}`, subject, role, 'ms', s.p99);
    rows.add(`server CPU per delivery ${metric}`, subject, role, 'µs', cpuUs);
    peers.add(declare(peers, row.latencyP50), system, s.p50);
    peers.add(declare(peers, row.latencyP99), system, s.p99);
    peers.add(
      declare(peers, row.latencyCpu),
      system,
      cpuUs,
      system === 'herald' ? perUnitUs(perProcess, delivered) : undefined,
    );
    if (loop.failed > 0 || samples.length < count)
      notes.push(
        `${subject} ${metric}, run ${run + 1}: ${count - samples.length} of ${count} never arrived, ${loop.failed} failed${loop.firstError ? ` (${loop.firstError})` : ''}`,
      );
    if (loop.behindMs > 5)
      notes.push(
        `${subject} ${metric}, run ${run + 1}: the generator fell ${loop.behindMs.toFixed(0)} ms behind its schedule`,
      );
  };
  const l = recipients.length;
  const to = (seq: number) => recipients[seq % l] as string;
  const payloadOf = (seq: number) => ctx.payload.make(seq);
  const notify = (http: Poster) => (seq: number) =>
    http.post('/notify', notifyBody(ctx.stack, to(seq), payloadOf(seq)));
  const push = (http: Poster) => (seq: number) =>
    http.post('/push', pushBody(to(seq), payloadOf(seq)));
  const systems: Array<Parameters<typeof atRate>> = [
    [
      SUBJECTS.herald,
      'herald',
      'herald',
      PROCESSES.herald,
      ctx.http.ingress,
      notify(ctx.http.ingress),
    ],
    ...ctx.centrifugo.map(
      (peer): Parameters<typeof atRate> => [
        SUBJECTS.centrifugo(peer.engine),
        'baseline',
        centrifugoSystem(peer.engine),
        centrifugoProcesses(peer.engine),
        peer.api,
        (seq) => peer.api.post('/api/publish', publishBody(to(seq), payloadOf(seq))),
      ],
    ),
    [
      SUBJECTS.socketIo,
      'baseline',
      'socketIo',
      PROCESSES.socketIo,
      ctx.http.socketIo,
      push(ctx.http.socketIo),
    ],
    [SUBJECTS.rawWs, 'baseline', 'rawWs', PROCESSES.rawWs, ctx.http.rawWs, push(ctx.http.rawWs)],
    [
      SUBJECTS.designFloor,
      'baseline',
      'designFloor',
      PROCESSES.designFloor,
      ctx.http.designFloor,
      notify(ctx.http.designFloor),
    ],
  ];
  for (const args of systems) await atRate(...args);
}

import type { FigureId } from '../config.js';
import { median } from '../stats.js';
import type { PeerLine, PeerTarget, System } from './peer-line.js';
import { type Check, formatNumber, formatRatio } from './results.js';

/**
 * Issue 31's comparison: every figure of its table for every system, led by Herald ÷ Centrifugo
 * with the Redis engine (the peer a team would self-host for Herald's job, scaled out the way
 * Herald is), each target judged on the median of same-run ratios.
 */
export { type PeerLine, type PeerTarget, SYSTEM_NAMES, SYSTEMS, type System } from './peer-line.js';

/** The median of the same-run ratios Herald ÷ Centrifugo (Redis engine); NaN when either is missing. */
export function heraldOverCentrifugo(line: PeerLine): number {
  const h = line.runs.herald ?? [];
  const c = line.runs.centrifugoRedis ?? [];
  const ratios = h
    .slice(0, c.length)
    .map((v, i) => v / (c[i] as number))
    .filter(Number.isFinite);
  return ratios.length > 0 ? median(ratios) : Number.NaN;
}

export function medianOf(line: PeerLine, system: System): number {
  const runs = (line.runs[system] ?? []).filter(Number.isFinite);
  return runs.length > 0 ? median(runs) : Number.NaN;
}

/** The issue 31 check of a line with a target. */
export function peerCheck(line: PeerLine): Check | undefined {
  const t = line.target;
  if (!t) return undefined;
  const v = t.kind === 'ratio' ? heraldOverCentrifugo(line) : medianOf(line, 'herald');
  const ok = Number.isFinite(v);
  const measured = !ok
    ? 'not measured'
    : t.kind === 'ratio'
      ? formatRatio(v, t.k)
      : `${formatNumber(v)} ${line.unit}`;
  return {
    figure: line.figure,
    target: `${line.label}: ${t.kind === 'ratio' ? `Herald ÷ Centrifugo-Redis ${t.text}` : t.text}`,
    measured,
    pass: ok ? (t.op === '>=' ? v >= t.k : v <= t.k) : null,
  };
}

/** Collects a figure's peer lines, run by run. */
export class PeerCollector {
  readonly #lines = new Map<string, PeerLine>();
  readonly #splits = new Map<string, Map<string, number[]>>();
  readonly #figure: FigureId;

  constructor(figure: FigureId) {
    this.#figure = figure;
  }

  /** Declares a line (once); later `add`s fill it. */
  line(order: number, label: string, unit: string, target?: PeerTarget, note?: string): void {
    if (this.#lines.has(label)) return;
    this.#lines.set(label, {
      figure: this.#figure,
      order,
      label,
      unit,
      runs: {},
      ...(target ? { target } : {}),
      ...(note ? { note } : {}),
    });
  }

  add(label: string, system: System, value: number, split?: Record<string, number>): void {
    const line = this.#lines.get(label);
    if (!line) throw new Error(`peer line "${label}" was never declared`);
    const runs = line.runs[system] ?? [];
    line.runs[system] = runs;
    runs.push(value);
    if (split && system === 'herald') {
      const bySplit = this.#splits.get(label) ?? new Map<string, number[]>();
      this.#splits.set(label, bySplit);
      for (const [process, v] of Object.entries(split)) {
        const vs = bySplit.get(process) ?? [];
        bySplit.set(process, vs);
        vs.push(v);
      }
    }
  }

  lines(): PeerLine[] {
    return [...this.#lines.values()].map((line) => {
      const split = this.#splits.get(line.label);
      return split
        ? { ...line, split: Object.fromEntries([...split].map(([p, vs]) => [p, median(vs)])) }
        : line;
    });
  }
}

export interface PeerRow {
  order: number;
  label: string;
  unit: string;
  target?: PeerTarget;
}

const atLeast = (k: number): PeerTarget => ({
  kind: 'ratio',
  op: '>=',
  k,
  text: `≥ ${k.toFixed(1)}×`,
});
const atMost = (k: number): PeerTarget => ({
  kind: 'ratio',
  op: '<=',
  k,
  text: `≤ ${k.toFixed(1)}×`,
});

/**
 * Issue 31's table, row by row, with its targets: each figure fills the rows it measures. The
 * sizes in the labels are the run's own (BENCH_CONCURRENCY, BENCH_BATCH_SIZE, ...).
 */
export function peerRows(c: {
  concurrency: number;
  batchSize: number;
  batchConcurrency: number;
  latencyRate: number;
  drainOne: number;
  drainMany: number;
  drainEach: number;
}) {
  const n = (v: number) => v.toLocaleString('en-US');
  const batch = (inFlight: number) => `batch of ${c.batchSize}, ${inFlight} in flight`;
  const overload = batch(c.concurrency);
  return {
    online: {
      order: 1,
      label: `online publish, ${c.concurrency} in flight: events/s`,
      unit: 'events/s',
      target: atLeast(1),
    },
    onlineCpu: {
      order: 2,
      label: 'online publish: server CPU per event',
      unit: 'µs',
      target: atMost(1),
    },
    batch: {
      order: 3,
      label: `${batch(c.batchConcurrency)}: events/s`,
      unit: 'events/s',
      target: atLeast(1.5),
    },
    batchCpu: { order: 4, label: `${batch(c.batchConcurrency)}: server CPU per event`, unit: 'µs' },
    overload: { order: 5, label: `${overload}: events/s`, unit: 'events/s', target: atLeast(1.5) },
    overloadCpu: { order: 6, label: `${overload}: server CPU per event`, unit: 'µs' },
    duplicates: {
      order: 7,
      label: `${overload}: events delivered twice`,
      unit: '%',
      target: { kind: 'value', op: '<=', k: 1, text: '≤ 1% of events delivered twice' },
    },
    answered202: {
      order: 8,
      label: `${overload}: events to connected, reading recipients answered 202`,
      unit: 'events',
      target: { kind: 'value', op: '<=', k: 0, text: 'none answered 202' },
    },
    latencyP50: { order: 9, label: `latency at ${n(c.latencyRate)} events/s: p50`, unit: 'ms' },
    latencyP99: {
      order: 10,
      label: `latency at ${n(c.latencyRate)} events/s: p99`,
      unit: 'ms',
      target: { kind: 'value', op: '<=', k: 2, text: 'p99 ≤ 2 ms' },
    },
    latencyCpu: {
      order: 11,
      label: `latency at ${n(c.latencyRate)} events/s: server CPU per event`,
      unit: 'µs',
    },
    store: {
      order: 12,
      label: `store ${n(c.drainOne)} for one offline recipient: events/s`,
      unit: 'events/s',
      target: atLeast(1),
    },
    storeCpu: { order: 13, label: `store ${n(c.drainOne)}: server CPU per event`, unit: 'µs' },
    drain: {
      order: 14,
      label: `drain those ${n(c.drainOne)} on connect: events/s`,
      unit: 'events/s',
      target: atLeast(0.5),
    },
    drainCpu: { order: 15, label: `drain ${n(c.drainOne)}: server CPU per event`, unit: 'µs' },
    storm: {
      order: 16,
      label: `${n(c.drainMany)} recipients × ${n(c.drainEach)} queued, all reconnect: p99 to last event`,
      unit: 'ms',
      target: atMost(1),
    },
    stormCpu: {
      order: 17,
      label: `${n(c.drainMany)} × ${n(c.drainEach)} reconnect: server CPU per event`,
      unit: 'µs',
    },
    memory: {
      order: 18,
      label: 'idle connections: memory (RSS) per connection',
      unit: 'KB',
      target: atMost(0.6),
    },
    connect: {
      order: 19,
      label: 'connect: server CPU per connection',
      unit: 'µs',
      target: atMost(1),
    },
  } satisfies Record<string, PeerRow>;
}

/** Declares a row of the table in a figure's collector. */
export function declare(peers: PeerCollector, row: PeerRow, note?: string): string {
  peers.line(row.order, row.label, row.unit, row.target, note);
  return row.label;
}

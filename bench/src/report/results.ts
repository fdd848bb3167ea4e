import type { FigureId } from '../config.js';
import { median } from '../stats.js';
import type { PeerLine } from './peer-line.js';

export type Role = 'herald' | 'baseline';

/** One measured quantity of one subject (Herald or a baseline), with every run's value. */
export interface Row {
  figure: FigureId;
  /** What is measured, e.g. `latency p50 @ 50% load`. */
  metric: string;
  /** Who is measured, e.g. `Herald POST /notify` or `raw ws echo RTT`. */
  subject: string;
  role: Role;
  unit: string;
  runs: number[];
  median: number;
}

/** A target of the issue, evaluated on medians measured in the same run. */
export interface Check {
  figure: FigureId;
  target: string;
  /** The measured ratio or value, as shown in the report. */
  measured: string;
  /** null: could not be evaluated (a figure was skipped or a measurement failed). */
  pass: boolean | null;
}

/**
 * A same-run ratio: Herald's value over a baseline's in each run (measured seconds apart on the
 * same cores), with the median over the runs. Steadier than a ratio of medians on a shared
 * machine, since a busy moment hits both sides of one run.
 */
export interface Ratio {
  label: string;
  runs: number[];
  median: number;
}

export interface FigureResult {
  id: FigureId;
  title: string;
  rows: Row[];
  checks: Check[];
  /** Same-run ratios worth stating beside the targets. */
  ratios?: Ratio[];
  /** Issue 31's lines: this figure's values for every system, against Centrifugo (Redis engine). */
  peers?: PeerLine[];
  /**
   * With BENCH_CPU_PROF=1 and a target of the figure missed: where Herald's processes spent their
   * CPU during the figure (the samples of its time span only).
   */
  profiles?: ServerProfile[];
  /** Observations worth a line in the report (losses, bounds reached, errors). */
  notes: string[];
  elapsedMs: number;
}

/** The heaviest functions of one server over one figure, from its `--cpu-prof` profile. */
export interface ServerProfile {
  server: string;
  busySamples: number;
  /** By self time: `{name, percent}` with the share of the busy samples. */
  self: Array<{ name: string; percent: number }>;
  /** The project's own functions by inclusive time. */
  inclusive: Array<{ name: string; percent: number }>;
}

export interface RunMeta {
  date: string;
  commit: string;
  quick: boolean;
  runs: number;
  rampRuns: number;
  node: string;
  natsServer: string;
  /** The Centrifugo version measured, or why it was skipped. */
  centrifugo?: string;
  machine: string;
  /** /proc/loadavg before and after the run. */
  loadBefore: string;
  loadAfter: string;
  pinning: string[];
  settings: Record<string, string | number | boolean>;
  elapsedMs: number;
  /** Set when the deadline stopped the run: what was not measured. */
  stoppedEarly?: string;
}

export interface BenchResults {
  meta: RunMeta;
  figures: FigureResult[];
}

/** Collects per-run values into rows (keyed by metric and subject) and computes their medians. */
export class RowCollector {
  readonly #rows = new Map<string, Row>();
  readonly #figure: FigureId;

  constructor(figure: FigureId) {
    this.#figure = figure;
  }

  add(metric: string, subject: string, role: Role, unit: string, value: number): void {
    const key = `${metric}\u0000${subject}`;
    let row = this.#rows.get(key);
    if (!row) {
      row = { figure: this.#figure, metric, subject, role, unit, runs: [], median: Number.NaN };
      this.#rows.set(key, row);
    }
    row.runs.push(value);
    row.median = median(row.runs);
  }

  /** The median of a row, NaN when it was never measured. */
  median(metric: string, subject: string): number {
    return this.#rows.get(`${metric}\u0000${subject}`)?.median ?? Number.NaN;
  }

  rows(): Row[] {
    return [...this.#rows.values()];
  }

  /** The same-run ratio of two subjects' values of one metric (run i over run i). */
  ratio(label: string, metric: string, herald: string, baseline: string): Ratio {
    const a = this.#rows.get(`${metric}\u0000${herald}`)?.runs ?? [];
    const b = this.#rows.get(`${metric}\u0000${baseline}`)?.runs ?? [];
    const runs = a.slice(0, b.length).map((v, i) => v / (b[i] as number));
    return { label, runs, median: runs.length > 0 ? median(runs) : Number.NaN };
  }
}

/** A "same-run ratio ≤ k" check (the median of per-run ratios); lower is better. */
export function ratioCheckAtMost(figure: FigureId, target: string, r: Ratio, k: number): Check {
  const ok = Number.isFinite(r.median);
  return {
    figure,
    target,
    measured: ok ? formatRatio(r.median, k) : 'not measured',
    pass: ok ? r.median <= k : null,
  };
}

/** A "same-run ratio ≥ k" check (the median of per-run ratios); higher is better. */
export function ratioCheckAtLeast(figure: FigureId, target: string, r: Ratio, k: number): Check {
  const ok = Number.isFinite(r.median);
  return {
    figure,
    target,
    measured: ok ? formatRatio(r.median, k) : 'not measured',
    pass: ok ? r.median >= k : null,
  };
}

/** A check of herald / baseline against `k`, passing when `passes(ratio)`. */
function ratioCheck(
  figure: FigureId,
  target: string,
  herald: number,
  baseline: number,
  k: number,
  passes: (ratio: number) => boolean,
): Check {
  const ratio = herald / baseline;
  const ok = Number.isFinite(ratio);
  return {
    figure,
    target,
    measured: ok ? formatRatio(ratio, k) : 'not measured',
    pass: ok ? passes(ratio) : null,
  };
}

/** A "Herald ≥ k × baseline" check; higher is better. */
export function ratioAtLeast(
  figure: FigureId,
  target: string,
  herald: number,
  baseline: number,
  k: number,
): Check {
  return ratioCheck(figure, target, herald, baseline, k, (r) => r >= k);
}

/** A "Herald ≤ k × baseline" check; lower is better (latency, memory). */
export function ratioAtMost(
  figure: FigureId,
  target: string,
  herald: number,
  baseline: number,
  k: number,
): Check {
  return ratioCheck(figure, target, herald, baseline, k, (r) => r <= k);
}

/** A "Herald < baseline" check (strictly below); lower is better. */
export function ratioBelow(
  figure: FigureId,
  target: string,
  herald: number,
  baseline: number,
): Check {
  return ratioCheck(figure, target, herald, baseline, 1, (r) => r < 1);
}

/** An absolute bound on a Herald value. */
export function valueCheck(
  figure: FigureId,
  target: string,
  value: number,
  unit: string,
  ok: (v: number) => boolean,
): Check {
  const measured = Number.isFinite(value);
  return {
    figure,
    target,
    measured: measured ? `${formatNumber(value)} ${unit}` : 'not measured',
    pass: measured ? ok(value) : null,
  };
}

/**
 * A ratio with two decimals, or three when it is within 0.01 of its target, so a miss by a hair
 * (0.796 against 0.8) does not read as the target itself.
 */
export function formatRatio(ratio: number, target: number): string {
  return `${ratio.toFixed(Math.abs(ratio - target) < 0.01 ? 3 : 2)}×`;
}

/** Three significant figures, thousands separated; integers stay integers. */
export function formatNumber(v: number): string {
  if (!Number.isFinite(v)) return '–';
  const abs = Math.abs(v);
  if (abs >= 1000) return Math.round(v).toLocaleString('en-US');
  if (abs >= 100) return v.toFixed(0);
  if (abs >= 10) return v.toFixed(1);
  if (abs >= 1) return v.toFixed(2);
  return v.toPrecision(2);
}

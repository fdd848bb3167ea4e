import type { FigureId } from '../config.js';
import { median } from '../stats.js';
import type { PeerLine, PeerTarget, System } from './peer-line.js';
import type { PeerRow } from './peer-rows.js';
import { type Check, formatNumber, formatRatio } from './results.js';

/**
 * Issue 31's comparison: every figure of its table for every system, led by Herald ÷ Centrifugo
 * with the Redis engine (the peer a team would self-host for Herald's job, scaled out the way
 * Herald is), each target judged on the median of same-run ratios.
 */
export {
  CLIENTS,
  type PeerLine,
  type PeerTarget,
  SYSTEM_NAMES,
  SYSTEMS,
  type System,
} from './peer-line.js';

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
  line(
    order: number,
    label: string,
    unit: string,
    target?: PeerTarget,
    note?: string,
    client?: string,
  ): void {
    if (this.#lines.has(label)) return;
    this.#lines.set(label, {
      figure: this.#figure,
      order,
      label,
      unit,
      runs: {},
      ...(target ? { target } : {}),
      ...(note ? { note } : {}),
      ...(client ? { client } : {}),
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

export { type PeerRow, peerRows } from './peer-rows.js';

/** Declares a row of the table in a figure's collector. */
export function declare(peers: PeerCollector, row: PeerRow, note?: string): string {
  peers.line(row.order, row.label, row.unit, row.target, note, row.client);
  return row.label;
}

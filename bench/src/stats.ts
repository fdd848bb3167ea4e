/**
 * Order statistics for latency samples and per-run figures. Percentiles use the nearest-rank
 * method (the value of an actual sample, never an interpolation between two), so a p99 over 100
 * samples is the 99th slowest one.
 */

/** The p-th percentile (0 < p <= 100) of samples by nearest rank; NaN when there are none. */
export function percentile(samples: ArrayLike<number>, p: number): number {
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile must be in (0, 100], got ${p}`);
  if (samples.length === 0) return Number.NaN;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(rank, sorted.length) - 1] as number;
}

/** The median of the runs; with an even count, the mean of the two middle values. */
export function median(values: readonly number[]): number {
  const finite = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (finite.length === 0) return Number.NaN;
  const mid = finite.length >> 1;
  return finite.length % 2 === 1
    ? (finite[mid] as number)
    : ((finite[mid - 1] as number) + (finite[mid] as number)) / 2;
}

export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function summarize(samples: ArrayLike<number>): LatencySummary {
  if (samples.length === 0) return { count: 0, p50: NaN, p90: NaN, p99: NaN, max: NaN };
  const sorted = Float64Array.from(samples).sort();
  const at = (p: number) =>
    sorted[Math.min(Math.ceil((p / 100) * sorted.length), sorted.length) - 1] as number;
  return {
    count: sorted.length,
    p50: at(50),
    p90: at(90),
    p99: at(99),
    max: sorted[sorted.length - 1] as number,
  };
}

/**
 * A bounded buffer of samples: a load generator records into it without allocating, and stops
 * recording (counting the overflow) once it is full, so a runaway run cannot exhaust memory.
 */
export class SampleBuffer {
  readonly #data: Float64Array;
  #length = 0;
  #dropped = 0;

  constructor(capacity: number) {
    this.#data = new Float64Array(capacity);
  }

  push(value: number): void {
    if (this.#length < this.#data.length) this.#data[this.#length++] = value;
    else this.#dropped++;
  }

  get length(): number {
    return this.#length;
  }

  get dropped(): number {
    return this.#dropped;
  }

  values(): Float64Array {
    return this.#data.subarray(0, this.#length);
  }
}

import type { Sample } from './samples.js';

const MB = 1024 * 1024;

export interface SlopeFit {
  /** MB per hour, from the least-squares fit; undefined with fewer than 3 samples or no spread. */
  mbPerHour: number | undefined;
  /** Samples the fit used (post-warm-up, every life). */
  points: number;
  /** How much time the fit spans, summed over the process's lives, ms. */
  windowMs: number;
}

/**
 * Least-squares slope of `y` over `t` with one common slope and an intercept of each group's own
 * (a restarted process starts again lower: its lives are fitted as parallel lines, so a restart
 * reads neither as growth nor as a fall). One group is the plain linear fit.
 */
export function pooledSlope(groups: ReadonlyArray<ReadonlyArray<{ t: number; y: number }>>): {
  slope: number | undefined;
  points: number;
} {
  let sxy = 0;
  let sxx = 0;
  let points = 0;
  for (const g of groups) {
    if (g.length === 0) continue;
    const mt = g.reduce((a, p) => a + p.t, 0) / g.length;
    const my = g.reduce((a, p) => a + p.y, 0) / g.length;
    for (const p of g) {
      sxy += (p.t - mt) * (p.y - my);
      sxx += (p.t - mt) ** 2;
    }
    points += g.length;
  }
  return { slope: points >= 3 && sxx > 0 ? sxy / sxx : undefined, points };
}

/**
 * One process's RSS slope after warm-up: each life's samples from `warmupMs` after its first one
 * on (a restarted process warms up again), fitted with {@link pooledSlope}.
 */
export function rssSlope(samples: readonly Sample[], process: string, warmupMs: number): SlopeFit {
  return memorySlope(samples, process, warmupMs, (s) => s.rssBytes);
}

/**
 * A Node process's slope of used heap after a full GC (its live data), as {@link rssSlope} fits
 * RSS; `points` 0 for a process that does not report it.
 */
export function heapSlope(samples: readonly Sample[], process: string, warmupMs: number): SlopeFit {
  return memorySlope(samples, process, warmupMs, (s) => s.heapAfterGcBytes);
}

function memorySlope(
  samples: readonly Sample[],
  process: string,
  warmupMs: number,
  bytes: (s: Sample) => number | undefined,
): SlopeFit {
  const lives = new Map<string, Sample[]>();
  for (const s of samples) {
    if (s.process !== process || bytes(s) === undefined) continue;
    const life = lives.get(s.life) ?? [];
    life.push(s);
    lives.set(s.life, life);
  }
  const groups: Array<Array<{ t: number; y: number }>> = [];
  let windowMs = 0;
  for (const life of lives.values()) {
    const first = life[0]?.t ?? 0;
    const kept = life.filter((s) => (s.t - first) * 1000 >= warmupMs);
    if (kept.length === 0) continue;
    windowMs += ((kept.at(-1)?.t ?? 0) - (kept[0]?.t ?? 0)) * 1000;
    // Hours and MB, so the slope reads in MB/h.
    groups.push(kept.map((s) => ({ t: s.t / 3600, y: (bytes(s) ?? 0) / MB })));
  }
  const { slope, points } = pooledSlope(groups);
  return { mbPerHour: slope, points, windowMs };
}

export type SlopeVerdict = 'ok' | 'too steep' | 'not judged';

/** A fit's verdict: judged only over a window long enough to tell growth from GC noise. */
export function judgeSlope(
  fit: SlopeFit,
  opts: { maxMbPerHour: number; minWindowMs: number },
): SlopeVerdict {
  if (fit.mbPerHour === undefined || fit.windowMs < opts.minWindowMs) return 'not judged';
  return fit.mbPerHour > opts.maxMbPerHour ? 'too steep' : 'ok';
}

import { parseEnv } from '@herald/kit';
import { z } from 'zod';

/** A bounded integer knob; a value out of bounds names the field, the bound and the fix. */
const int = (min: number, max: number, fallback: number) =>
  z.coerce
    .number({ error: `must be an integer between ${min} and ${max}` })
    .int(`must be an integer between ${min} and ${max}`)
    .min(min, `must be at least ${min}: set it to ${min}..${max}, or unset it for ${fallback}`)
    .max(max, `must be at most ${max}: set it to ${min}..${max}, or unset it for ${fallback}`)
    .default(fallback);

/**
 * Every knob of `make soak`, as environment variables. The defaults are the ones the issue names
 * (10 minutes, a sample every 10 s); CI runs `SOAK_MINUTES=3`.
 */
export const SoakEnv = z.object({
  /**
   * How long the load runs, minutes (the end's delivery wait comes after). Default 10; at most
   * 4 hours, as the run keeps every id and every webhook it got in memory until its checks.
   */
  SOAK_MINUTES: int(1, 240, 10),
  /**
   * Where the load goes: `dev`, the test kit's whole stack (`make dev`'s processes); `compose`,
   * the docker compose stack scripts/soak.sh starts for the run (deploy/docker-compose.yml).
   */
  SOAK_TARGET: z
    .enum(['dev', 'compose'], {
      error:
        "must be dev (the test kit's processes) or compose (the docker compose stack, through make soak)",
    })
    .default('dev'),
  /** Seconds between two samples of every process. Default 10. */
  SOAK_SAMPLE_S: int(1, 300, 10),
  /** Events per second the load offers, every kind together (a batch counts its events). Default 20. */
  SOAK_RATE: int(1, 500, 20),
  /** Sockets the churn opens (and closes) every second. Default 3. */
  SOAK_CHURN_PER_S: int(0, 50, 3),
  /**
   * Warm-up after a process (re)starts, seconds: its samples before are left out of the slope.
   * A run shorter than five warm-ups uses a fifth of the run instead. Default 120.
   */
  SOAK_WARMUP_S: int(0, 3600, 120),
  /**
   * A process whose RSS grows faster than this after warm-up fails the run, MB per hour: judged
   * for nats-server and Postgres; for a Node service only when its heap after GC grows too (a
   * Node service's RSS alone is flagged, not failed: docs/operations.md "Soak"). Default 50.
   */
  SOAK_MAX_SLOPE_MB_PER_H: int(1, 10_000, 50),
  /**
   * A Node service whose used heap after a full GC (its live data) grows faster than this after
   * warm-up fails the run, MB per hour. Default 10.
   */
  SOAK_MAX_HEAP_SLOPE_MB_PER_H: int(1, 10_000, 10),
  /**
   * The slope is judged only over at least this many minutes of post-warm-up samples (a short
   * run's fit is GC noise: it is reported, not judged). Default 20.
   */
  SOAK_SLOPE_MIN_WINDOW_MIN: int(1, 240, 20),
  /** After the load stops, how long every accepted event may take to arrive, seconds. Default 240. */
  SOAK_DRAIN_TIMEOUT_S: int(10, 3600, 240),
  /** Where the results go (a `soak-<timestamp>/` folder under it). Default bench/results. */
  SOAK_RESULTS_DIR: z.string().min(1, 'must name a directory').default('bench/results'),
});

export interface SoakConfig {
  minutes: number;
  target: 'dev' | 'compose';
  sampleMs: number;
  rate: number;
  churnPerS: number;
  /** The warm-up in effect: SOAK_WARMUP_S, or a fifth of a short run. */
  warmupMs: number;
  maxSlopeMbPerH: number;
  maxHeapSlopeMbPerH: number;
  slopeMinWindowMs: number;
  drainTimeoutMs: number;
  resultsDir: string;
  /** The edge restart and the NATS restart, ms after the load starts (40% and 70% of the run). */
  edgeRestartAtMs: number;
  natsRestartAtMs: number;
}

export function loadSoakConfig(env: Record<string, string | undefined> = process.env): SoakConfig {
  const e = parseEnv('soak', SoakEnv, env);
  const runMs = e.SOAK_MINUTES * 60_000;
  return {
    minutes: e.SOAK_MINUTES,
    target: e.SOAK_TARGET,
    sampleMs: e.SOAK_SAMPLE_S * 1000,
    rate: e.SOAK_RATE,
    churnPerS: e.SOAK_CHURN_PER_S,
    warmupMs: Math.min(e.SOAK_WARMUP_S * 1000, Math.round(runMs / 5)),
    maxSlopeMbPerH: e.SOAK_MAX_SLOPE_MB_PER_H,
    maxHeapSlopeMbPerH: e.SOAK_MAX_HEAP_SLOPE_MB_PER_H,
    slopeMinWindowMs: e.SOAK_SLOPE_MIN_WINDOW_MIN * 60_000,
    drainTimeoutMs: e.SOAK_DRAIN_TIMEOUT_S * 1000,
    resultsDir: e.SOAK_RESULTS_DIR,
    edgeRestartAtMs: Math.round(runMs * 0.4),
    natsRestartAtMs: Math.round(runMs * 0.7),
  };
}

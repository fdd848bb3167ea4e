import { envInt } from '@herald/kit';
import { REFUSAL_BATCH_RECORDS_MAX } from '@herald/proto';

/**
 * The bounds of the refusal log (issue 45, refusal-log.ts): a flood of refusals costs at most one
 * NATS message per key per interval, and a bounded map in between. Spread into ingress's Env.
 */
export const RefusalEnv = {
  /**
   * How often a key's aggregated refusals are published, ms: identical refusals within it are one
   * record with a count. Default 2000; 100..60000.
   */
  REFUSAL_FLUSH_MS: envInt(2000, 100, 60_000),
  /**
   * Keys whose refusals one interval holds: a refusal of a further key in the same interval is
   * only counted (herald_refusals_dropped_total). Default 1000; 1..100000.
   */
  REFUSAL_KEYS_MAX: envInt(1000, 1, 100_000),
  /**
   * Distinct refusals (status, code, field, origin, route) one key's interval holds: a further
   * kind is only counted as dropped. Default 20; 1..200.
   */
  REFUSAL_KINDS_PER_KEY_MAX: envInt(20, 1, REFUSAL_BATCH_RECORDS_MAX),
};

/** What the refusal log reads of the configuration. */
export interface RefusalLimits {
  flushMs: number;
  keysMax: number;
  kindsPerKeyMax: number;
}

export function refusalLimits(config: {
  REFUSAL_FLUSH_MS: number;
  REFUSAL_KEYS_MAX: number;
  REFUSAL_KINDS_PER_KEY_MAX: number;
}): RefusalLimits {
  return {
    flushMs: config.REFUSAL_FLUSH_MS,
    keysMax: config.REFUSAL_KEYS_MAX,
    kindsPerKeyMax: config.REFUSAL_KINDS_PER_KEY_MAX,
  };
}

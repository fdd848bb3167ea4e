import { HeraldError, type VerifiedKey } from '@herald/proto';
import {
  type BucketLimits,
  type BucketState,
  msUntilToken,
  refill,
  retryAfterSeconds,
} from './token-bucket.js';

/** 403 `rate_limited`: the key's limits, and when a token is there again (Retry-After). */
export function rateLimited(key: VerifiedKey, waitMs: number): HeraldError {
  const limits: BucketLimits = key.limits;
  const retryAfter = retryAfterSeconds(waitMs);
  const whose = key.kind === 'test' ? 'Test keys' : `the ${key.plan} plan`;
  return new HeraldError(
    'rate_limited',
    `This api_key is over its dispatch rate (${limits.dispatch_rate}/s sustained, bursts of ${limits.dispatch_burst}, for ${whose}): retry after ${retryAfter} s (Retry-After), spread dispatches out, or move to a bigger plan`,
    { field: 'api_key', retryAfter },
  );
}

/**
 * The dispatch rate limit on this instance alone: each key's token bucket in memory, for while
 * the shared state (NATS KV) does not answer. At most `maxKeys` buckets; the one made first is
 * forgotten first.
 */
export class LocalRate {
  readonly #buckets = new Map<string, BucketState>();
  readonly #maxKeys: number;

  constructor(maxKeys: number) {
    this.#maxKeys = maxKeys;
  }

  /** Spends one of the key's tokens, or throws 403 `rate_limited` with its Retry-After. */
  take(key: VerifiedKey, now: number): void {
    const bucket = refill(this.#buckets.get(key.id), key.limits, now);
    if (bucket.tokens < 1) {
      this.#buckets.set(key.id, bucket);
      throw rateLimited(key, msUntilToken(bucket.tokens, key.limits));
    }
    this.#buckets.set(key.id, { tokens: bucket.tokens - 1, at: bucket.at });
    if (this.#buckets.size > this.#maxKeys) {
      const oldest = this.#buckets.keys().next().value;
      if (oldest !== undefined) this.#buckets.delete(oldest);
    }
  }
}

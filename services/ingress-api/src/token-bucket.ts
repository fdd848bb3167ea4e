import { msUntilToken as kitMsUntilToken, refillBucket } from '@herald/kit';
import { z } from 'zod';

/** A key's token bucket at one instant: `tokens` (fractional) as of `at` (epoch ms). */
export const BucketState = z.object({
  tokens: z.number().nonnegative(),
  at: z.number().int(),
});
export type BucketState = z.infer<typeof BucketState>;

/** The two figures of a plan that shape a key's bucket. */
export interface BucketLimits {
  /** Tokens added per second (the sustained dispatch rate). */
  dispatch_rate: number;
  /** Most tokens the bucket holds (the burst). */
  dispatch_burst: number;
}

/**
 * The bucket as of `now` (kit's {@link refillBucket} with the plan's figures): refilled at
 * `dispatch_rate` per second since `state.at`, never above `dispatch_burst`. A missing state is a
 * full bucket (a key not seen lately has rested). Time that runs backwards (another instance's
 * clock ahead of ours) adds nothing.
 */
export function refill(
  state: BucketState | undefined,
  limits: BucketLimits,
  now: number,
): BucketState {
  return refillBucket(
    state,
    { perSecond: limits.dispatch_rate, burst: limits.dispatch_burst },
    now,
  );
}

/** Milliseconds until a bucket holding `tokens` has one whole token. */
export function msUntilToken(tokens: number, limits: BucketLimits): number {
  return kitMsUntilToken(tokens, limits.dispatch_rate);
}

/** The Retry-After header for a wait: whole seconds, at least 1. */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/**
 * How many tokens one lease may take at most: `batchMs` worth of the sustained rate, at least 1
 * and at most the burst. Small leases keep the global rate accurate; large ones touch the shared
 * state less often.
 */
export function maxLease(limits: BucketLimits, batchMs: number): number {
  const share = Math.floor((limits.dispatch_rate * batchMs) / 1000);
  return Math.max(1, Math.min(limits.dispatch_burst, share));
}

/**
 * Most tokens one instance holds for a key at once: its lease (at most {@link maxLease}) and the
 * one renewed ahead of it, which starts once half of the current one is spent (then the current
 * one holds at most half of the largest lease) or near its expiry with more than half unspent
 * (then the next one is half the size).
 */
export function maxHeld(limits: BucketLimits, batchMs: number): number {
  const max = maxLease(limits, batchMs);
  return max + Math.floor(max / 2);
}

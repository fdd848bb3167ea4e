/** The shape of a token bucket: how fast it fills and how much it holds. */
export interface TokenBucketLimits {
  /** Tokens added per second (the sustained rate). */
  perSecond: number;
  /** Most tokens the bucket holds (the burst). */
  burst: number;
}

/** A token bucket at one instant: `tokens` (fractional) as of `at` (epoch ms). */
export interface TokenBucket {
  tokens: number;
  at: number;
}

/**
 * The bucket as of `now`: refilled at `perSecond` since `bucket.at`, never above `burst`. A
 * missing bucket is a full one (a source not seen lately has rested). Time that runs backwards
 * (a clock stepped back, or another instance's clock ahead of ours) adds nothing and keeps the
 * later instant, so the same interval is never counted twice.
 */
export function refillBucket(
  bucket: TokenBucket | undefined,
  limits: TokenBucketLimits,
  now: number,
): TokenBucket {
  if (!bucket) return { tokens: limits.burst, at: now };
  const elapsed = Math.max(0, now - bucket.at);
  const tokens = Math.min(limits.burst, bucket.tokens + (elapsed * limits.perSecond) / 1000);
  return { tokens, at: Math.max(now, bucket.at) };
}

/** Milliseconds until a bucket holding `tokens` has one whole token (0 when it has one). */
export function msUntilToken(tokens: number, perSecond: number): number {
  if (tokens >= 1) return 0;
  return Math.ceil(((1 - tokens) * 1000) / perSecond);
}

/**
 * The Retry-After, in whole seconds and never below 1, of a refusal by a bucket holding
 * `tokens`: when its next whole token is due.
 */
export function secondsUntilToken(tokens: number, perSecond: number): number {
  return Math.max(1, Math.ceil((1 - tokens) / perSecond));
}

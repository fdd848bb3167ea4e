/** Reconnect timing. Every field is optional; the defaults suit a browser tab or an app. */
export interface BackoffOptions {
  /** First retry waits up to this long (ms); each failure doubles it. Default 1000. */
  baseMs?: number;
  /**
   * Longest wait between attempts (ms), at most one day. Default 60000. A 4429 `connection_limit`
   * without a hint waits between cap/2 and cap; a refusal's `retry_after` is honoured up to cap.
   */
  capMs?: number;
  /** A connection open at least this long (ms) resets the schedule to `baseMs`. Default 10000. */
  stableMs?: number;
}

export type Backoff = Required<BackoffOptions>;

/**
 * Exponential backoff with full jitter: uniformly random in [0, min(cap, base * 2^attempt)), so
 * clients dropped together by one edge do not come back together.
 */
export function backoffDelay(attempt: number, b: Backoff, random: () => number): number {
  return Math.floor(random() * Math.min(b.capMs, b.baseMs * 2 ** attempt));
}

/**
 * The wait before attempt `attempt + 1`, after `refusal` (none: a drop, a timeout, a socket that
 * never opened). A refusal that says how long (`retry_after` of 4429 `too_many_connects`) is
 * waited out, plus this attempt's full-jitter window, so a fleet refused together (an edge
 * restarting under its connect rate) spreads out rather than coming back in the same instant; at
 * most capMs. A 4429 `connection_limit` without one (the account is full: a slot frees only when
 * another socket closes) comes back late, between cap/2 and cap. Anything else: full jitter.
 */
export function retryDelay(
  attempt: number,
  b: Backoff,
  random: () => number,
  refusal?: { code: string; retryAfter?: number | undefined },
): number {
  if (refusal?.retryAfter !== undefined) {
    return Math.min(b.capMs, refusal.retryAfter * 1000 + backoffDelay(attempt, b, random));
  }
  if (refusal?.code === 'connection_limit')
    return Math.floor(b.capMs / 2 + (random() * b.capMs) / 2);
  return backoffDelay(attempt, b, random);
}

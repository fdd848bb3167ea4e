/** Reconnect timing. Every field is optional; the defaults suit a browser tab or an app. */
export interface BackoffOptions {
  /** First retry waits up to this long (ms); each failure doubles it. Default 1000. */
  baseMs?: number;
  /** Longest wait between attempts (ms). Default 60000. A 4429 refusal waits between cap/2 and cap. */
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

/** The wait after a 4429 (connection cap): the account is full, so come back late and spread. */
export function limitedDelay(b: Backoff, random: () => number): number {
  return Math.floor(b.capMs / 2 + (random() * b.capMs) / 2);
}

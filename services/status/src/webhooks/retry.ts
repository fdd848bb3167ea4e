/** Each wait of the schedule is taken within ±20 %, so retries of many messages spread out. */
export const JITTER = 0.2;
/** A Retry-After longer than this is taken as this, ms (a day). */
export const RETRY_AFTER_MAX_MS = 24 * 3600_000;

/**
 * The wait before the next attempt after `attempts` attempts failed, ms; undefined when the
 * schedule is exhausted. A receiver's Retry-After, when it gives one, is honoured instead.
 */
export function nextWait(
  schedule: readonly number[],
  attempts: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number | undefined {
  const wait = schedule[attempts - 1];
  if (wait === undefined) return undefined;
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, RETRY_AFTER_MAX_MS);
  return Math.round(wait * (1 - JITTER + 2 * JITTER * random()));
}

/** Retry-After as seconds (`120`) or an HTTP-date, in ms from `now`; undefined when neither. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  if (Number.isNaN(at) || !/[a-z]/i.test(text)) return undefined;
  return Math.max(0, at - now);
}

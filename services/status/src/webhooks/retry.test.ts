import { describe, expect, it } from 'vitest';
import { nextWait, parseRetryAfter, RETRY_AFTER_MAX_MS } from './retry.js';

const SCHEDULE = [5_000, 300_000];

describe('the retry schedule', () => {
  it('takes each wait within ±20 %, at both ends of the jitter', () => {
    expect(nextWait(SCHEDULE, 1, undefined, () => 0)).toBe(4_000);
    expect(nextWait(SCHEDULE, 1, undefined, () => 1)).toBe(6_000);
    expect(nextWait(SCHEDULE, 2, undefined, () => 0.5)).toBe(300_000);
  });

  it('is exhausted after 1 + its length attempts', () => {
    expect(nextWait(SCHEDULE, 2, undefined)).toBeDefined();
    expect(nextWait(SCHEDULE, 3, undefined)).toBeUndefined();
    expect(nextWait(SCHEDULE, 3, 1000)).toBeUndefined();
  });

  it('honours Retry-After instead, up to a day', () => {
    expect(nextWait(SCHEDULE, 1, 120_000)).toBe(120_000);
    expect(nextWait(SCHEDULE, 1, 0)).toBe(0);
    expect(nextWait(SCHEDULE, 1, RETRY_AFTER_MAX_MS + 1)).toBe(RETRY_AFTER_MAX_MS);
  });

  it('reads Retry-After as seconds or an HTTP-date', () => {
    const now = Date.parse('2026-11-28T12:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Sat, 28 Nov 2026 12:01:30 GMT', now)).toBe(90_000);
    expect(parseRetryAfter('Sat, 28 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { maxLease, msUntilToken, refill, retryAfterSeconds } from './token-bucket.js';

const LIMITS = { dispatch_rate: 4, dispatch_burst: 10 };

describe('refill', () => {
  it('starts a key never seen (or expired from the store) with a full bucket', () => {
    expect(refill(undefined, LIMITS, 1000)).toEqual({ tokens: 10, at: 1000 });
  });

  it('adds dispatch_rate tokens per second, fractions included, up to the burst', () => {
    expect(refill({ tokens: 0, at: 0 }, LIMITS, 250)).toEqual({ tokens: 1, at: 250 });
    expect(refill({ tokens: 0.5, at: 0 }, LIMITS, 100)).toEqual({ tokens: 0.9, at: 100 });
    expect(refill({ tokens: 9, at: 0 }, LIMITS, 60_000)).toEqual({ tokens: 10, at: 60_000 });
  });

  it('adds nothing when the state was written by a clock ahead of ours, and keeps its time', () => {
    expect(refill({ tokens: 2, at: 5000 }, LIMITS, 4000)).toEqual({ tokens: 2, at: 5000 });
  });
});

describe('waiting', () => {
  it('says how long until one whole token', () => {
    expect(msUntilToken(1, LIMITS)).toBe(0);
    expect(msUntilToken(0, LIMITS)).toBe(250);
    expect(msUntilToken(0.5, LIMITS)).toBe(125);
  });

  it('gives Retry-After in whole seconds, never below 1', () => {
    expect(retryAfterSeconds(0)).toBe(1);
    expect(retryAfterSeconds(125)).toBe(1);
    expect(retryAfterSeconds(1000)).toBe(1);
    expect(retryAfterSeconds(1001)).toBe(2);
  });
});

describe('maxLease', () => {
  it('is batchMs worth of the rate, at least 1 and at most the burst', () => {
    expect(maxLease({ dispatch_rate: 500, dispatch_burst: 5000 }, 100)).toBe(50);
    expect(maxLease({ dispatch_rate: 5, dispatch_burst: 50 }, 100)).toBe(1);
    expect(maxLease({ dispatch_rate: 1000, dispatch_burst: 20 }, 100)).toBe(20);
    expect(maxLease({ dispatch_rate: 0.1, dispatch_burst: 1 }, 10_000)).toBe(1);
  });
});

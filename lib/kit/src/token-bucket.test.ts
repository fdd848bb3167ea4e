import { describe, expect, it } from 'vitest';
import { msUntilToken, refillBucket, secondsUntilToken } from './token-bucket.js';

const LIMITS = { perSecond: 4, burst: 10 };

describe('refillBucket', () => {
  it('starts a source never seen with a full bucket', () => {
    expect(refillBucket(undefined, LIMITS, 1000)).toEqual({ tokens: 10, at: 1000 });
  });

  it('adds perSecond tokens per second, fractions included, up to the burst', () => {
    expect(refillBucket({ tokens: 0, at: 0 }, LIMITS, 250)).toEqual({ tokens: 1, at: 250 });
    expect(refillBucket({ tokens: 0.5, at: 0 }, LIMITS, 100)).toEqual({ tokens: 0.9, at: 100 });
    expect(refillBucket({ tokens: 9, at: 0 }, LIMITS, 60_000)).toEqual({ tokens: 10, at: 60_000 });
  });

  it('adds nothing when time runs backwards, and keeps the later instant', () => {
    expect(refillBucket({ tokens: 2, at: 5000 }, LIMITS, 4000)).toEqual({ tokens: 2, at: 5000 });
  });
});

describe('waiting for a token', () => {
  it('says how many ms until one whole token', () => {
    expect(msUntilToken(1, 4)).toBe(0);
    expect(msUntilToken(0, 4)).toBe(250);
    expect(msUntilToken(0.5, 4)).toBe(125);
  });

  it('gives a Retry-After in whole seconds, never below 1', () => {
    expect(secondsUntilToken(0.5, 4)).toBe(1);
    expect(secondsUntilToken(2, 4)).toBe(1);
    expect(secondsUntilToken(0, 0.5)).toBe(2);
    expect(secondsUntilToken(0, 0.4)).toBe(3);
  });
});

import { HeraldError } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { ConnectRateLimiter } from './connect-rate.js';

function refusal(fn: () => void): HeraldError | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (err instanceof HeraldError) return err;
    throw err;
  }
}

describe('ConnectRateLimiter', () => {
  it('lets a burst through, refuses the next with 429 too_many_connects and Retry-After, then refills at the rate', () => {
    let now = 0;
    const limiter = new ConnectRateLimiter({ perSecond: 2, burst: 3, maxSources: 10 }, () => now);
    for (let i = 0; i < 3; i++) limiter.take('a');
    const refused = refusal(() => limiter.take('a'));
    expect(refused).toMatchObject({ code: 'too_many_connects', status: 429, retryAfter: 1 });
    expect(refused?.message).toMatch(/more than 3 at once, then 2 per second/);
    // Another address has its own bucket.
    expect(refusal(() => limiter.take('b'))).toBeUndefined();
    // Half a second gives back exactly one attempt at 2 per second.
    now = 500;
    expect(refusal(() => limiter.take('a'))).toBeUndefined();
    expect(refusal(() => limiter.take('a'))?.code).toBe('too_many_connects');
  });

  it('counts refused attempts as nothing: a flooder refused at the limit is not pushed further back', () => {
    let now = 0;
    const limiter = new ConnectRateLimiter({ perSecond: 1, burst: 1, maxSources: 10 }, () => now);
    limiter.take('a');
    for (let i = 0; i < 100; i++) expect(refusal(() => limiter.take('a'))?.retryAfter).toBe(1);
    now = 1000;
    expect(refusal(() => limiter.take('a'))).toBeUndefined();
  });

  it('holds at most maxSources addresses, forgetting the one seen longest ago', () => {
    const now = 0;
    const limiter = new ConnectRateLimiter({ perSecond: 1, burst: 1, maxSources: 2 }, () => now);
    limiter.take('a');
    limiter.take('b');
    expect(limiter.size).toBe(2);
    // 'a' is seen again (refused): it becomes the most recent, so 'b' is the one forgotten.
    expect(refusal(() => limiter.take('a'))?.code).toBe('too_many_connects');
    limiter.take('c');
    expect(limiter.size).toBe(2);
    // 'b' was forgotten: it comes back with a full bucket (and 'a', now the oldest, goes).
    expect(refusal(() => limiter.take('b'))).toBeUndefined();
    expect(limiter.size).toBe(2);
    // 'c' is still remembered, its bucket empty.
    expect(refusal(() => limiter.take('c'))?.code).toBe('too_many_connects');
  });

  it('drops early only an address already told 429 whose bucket is still empty', () => {
    let now = 0;
    const limiter = new ConnectRateLimiter({ perSecond: 1, burst: 1, maxSources: 10 }, () => now);
    limiter.take('a');
    // Empty, but not yet told: its next connect must get its 429 and Retry-After.
    expect(limiter.dropsEarly('a')).toBe(false);
    expect(refusal(() => limiter.take('a'))?.code).toBe('too_many_connects');
    expect(limiter.dropsEarly('a')).toBe(true);
    expect(limiter.dropsEarly('unknown')).toBe(false);
    // Refilled: no longer dropped; admitted again, it is no longer "told".
    now = 1000;
    expect(limiter.dropsEarly('a')).toBe(false);
    limiter.take('a');
    expect(limiter.dropsEarly('a')).toBe(false);
  });

  it('with perSecond 0 refuses nothing and remembers nothing', () => {
    const limiter = new ConnectRateLimiter({ perSecond: 0, burst: 1, maxSources: 1 });
    for (let i = 0; i < 1000; i++) limiter.take(`10.0.0.${i % 7}`);
    expect(limiter.size).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../test/support/fake-clock.js';
import { RateLimiter } from './rate-limiter.js';

describe('RateLimiter', () => {
  it('spaces calls 1/rate apart, in call order', async () => {
    const clock = new FakeClock(0);
    const limiter = new RateLimiter(100, clock);
    const at: number[] = [];
    const calls = [0, 1, 2, 3].map((i) => limiter.take().then(() => at.push(clock.now() * 10 + i)));
    await clock.advance(1000);
    await Promise.all(calls);
    // 100/s: a call every 10 ms; the first goes at once.
    expect(at).toEqual([0, 101, 202, 303]);
  });

  it('does not bank unused capacity beyond the current instant', async () => {
    const clock = new FakeClock(0);
    const limiter = new RateLimiter(10, clock);
    await limiter.take();
    await clock.advance(5000);
    const before = clock.now();
    await limiter.take();
    expect(clock.now()).toBe(before);
    const second = limiter.take();
    await clock.advance(99);
    let done = false;
    void second.then(() => {
      done = true;
    });
    await clock.advance(0);
    expect(done).toBe(false);
    await clock.advance(1);
    await second;
  });

  it('rejects a non-positive rate', () => {
    expect(() => new RateLimiter(0)).toThrow(/perSecond must be positive/);
  });
});

import { describe, expect, it } from 'vitest';
import { FanoutPacer } from './fanout-pacer.js';

/** A clock that moves only when the pacer sleeps: the waits it asks for, recorded. */
function fakeClock() {
  let t = 1000;
  const sleeps: number[] = [];
  return {
    now: () => t,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      t += ms;
    },
    sleeps,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

describe('FanoutPacer', () => {
  it('spaces copies at the configured rate: 1,000 copies at 2,000/s take 500 ms of waits', async () => {
    const clock = fakeClock();
    const pacer = new FanoutPacer(2000, clock.now, clock.sleep);
    for (let i = 0; i < 1000; i++) await pacer.take();
    const slept = clock.sleeps.reduce((a, b) => a + b, 0);
    // The first copy goes at once; the other 999 are 0.5 ms apart (a wait under 1 ms is slept
    // with a later one, so the last may still be owed).
    expect(slept).toBeGreaterThanOrEqual(498.5);
    expect(slept).toBeLessThanOrEqual(499.5);
  });

  it('reserves a group at once: 500 copies at 1,000/s make the next caller wait 500 ms', async () => {
    const clock = fakeClock();
    const pacer = new FanoutPacer(1000, clock.now, clock.sleep);
    await pacer.take(500);
    expect(clock.sleeps).toEqual([]);
    await pacer.take(1);
    expect(clock.sleeps).toEqual([500]);
  });

  it('saves up no burst after a quiet spell', async () => {
    const clock = fakeClock();
    const pacer = new FanoutPacer(100, clock.now, clock.sleep);
    await pacer.take();
    clock.advance(60_000);
    await pacer.take();
    await pacer.take();
    expect(clock.sleeps).toEqual([10]);
  });

  it('does not pace at 0, nor for no copies', async () => {
    const clock = fakeClock();
    await Promise.all(
      Array.from({ length: 100 }, () => new FanoutPacer(0, clock.now, clock.sleep).take()),
    );
    const paced = new FanoutPacer(10, clock.now, clock.sleep);
    await paced.take(0);
    await paced.take(0);
    expect(clock.sleeps).toEqual([]);
  });
});

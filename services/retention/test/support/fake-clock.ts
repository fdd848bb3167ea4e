import type { Clock } from '../../src/clock.js';

interface Timer {
  id: number;
  at: number;
  fn: () => void;
}

/** A manual clock: time moves only when a test advances it, firing due timers in order. */
export class FakeClock implements Clock {
  #now: number;
  #timers: Timer[] = [];
  #ids = 0;
  /** Every delay a timer was armed with, in order (to check long waits are chained). */
  readonly delays: number[] = [];

  constructor(start: Date | number) {
    this.#now = typeof start === 'number' ? start : start.getTime();
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const timer = { id: ++this.#ids, at: this.#now + Math.max(0, ms), fn };
    this.delays.push(ms);
    this.#timers.push(timer);
    return timer.id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers = this.#timers.filter((t) => t.id !== handle);
  }

  get pending(): number {
    return this.#timers.length;
  }

  /** Moves time to `to`, firing each due timer at its own time and letting promises settle between. */
  async advanceTo(to: Date | number): Promise<void> {
    const target = typeof to === 'number' ? to : to.getTime();
    // Let what the test just did (resolve a promise, release a run) play out first.
    await settle();
    for (;;) {
      const next = this.#timers
        .filter((t) => t.at <= target)
        .sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!next) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#now = Math.max(this.#now, next.at);
      next.fn();
      await settle();
    }
    this.#now = Math.max(this.#now, target);
    await settle();
  }

  advance(ms: number): Promise<void> {
    return this.advanceTo(this.#now + ms);
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

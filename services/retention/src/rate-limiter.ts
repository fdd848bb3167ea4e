import { type Clock, sleep, systemClock } from './clock.js';

/**
 * Spaces calls evenly at most `perSecond` apart, so a run over many consumers never floods the
 * JetStream API that ingress and the edges also depend on. Waiters are served in call order.
 */
export class RateLimiter {
  readonly #intervalMs: number;
  readonly #clock: Clock;
  #nextSlot = 0;

  constructor(perSecond: number, clock: Clock = systemClock) {
    if (!(perSecond > 0)) throw new TypeError(`perSecond must be positive, got ${perSecond}`);
    this.#intervalMs = 1000 / perSecond;
    this.#clock = clock;
  }

  /** Resolves when the caller may make its next call. */
  async take(): Promise<void> {
    const now = this.#clock.now();
    const slot = Math.max(now, this.#nextSlot);
    this.#nextSlot = slot + this.#intervalMs;
    const wait = slot - now;
    // Sub-millisecond waits are rounded away: timers cannot do better and they would only add drift.
    if (wait >= 1) await sleep(this.#clock, wait);
  }
}

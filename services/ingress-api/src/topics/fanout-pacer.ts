/**
 * The fan-out's pace on one instance (FANOUT_COPIES_PER_S): copies are spaced so that, over any
 * stretch, this instance places at most that many a second, whichever worker or lane takes them.
 * A fan-out saturating the instance's core (and nats-server's, and the status service's writes)
 * is what raised `/notify`'s p99 during a 100,000-member fan-out to 2.3–6.3× (figure 10): a
 * topic yields to direct dispatch by leaving the rest of the core to it. 0 = no pace.
 */
export class FanoutPacer {
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  /** When the next copy may go, ms on `now`'s clock. */
  #next = Number.NEGATIVE_INFINITY;

  constructor(
    copiesPerS: number,
    now: () => number = () => performance.now(),
    sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {
    this.#intervalMs = copiesPerS > 0 ? 1000 / copiesPerS : 0;
    this.#now = now;
    this.#sleep = sleep;
  }

  /**
   * Waits until `copies` more may go, and reserves them. Reservations queue up: each caller waits
   * for those reserved before it, so lanes in parallel share the one pace. A pace left idle is
   * not saved up beyond one copy (no burst after a quiet spell).
   */
  async take(copies = 1): Promise<void> {
    if (this.#intervalMs === 0 || copies <= 0) return;
    const now = this.#now();
    const start = Math.max(this.#next, now);
    this.#next = start + copies * this.#intervalMs;
    const wait = start - now;
    // setTimeout cannot wait under a millisecond: shorter waits add up in #next and are slept
    // together by a later copy, so the average pace holds.
    if (wait >= 1) await this.#sleep(wait);
  }
}

import { performance } from 'node:perf_hooks';

/**
 * Counts the events of one measurement window arriving at a fleet, by their sequence numbers:
 * each distinct event once, a second arrival of the same event as a duplicate, and a frame from
 * an earlier window (numbered below this one's first) as late. A client that gets the bare payload
 * cannot drop a duplicate, so the bench counts them.
 */
export class DeliveryTracker {
  /** Distinct events of this window that arrived. */
  received = 0;
  /** Arrivals of an event of this window that had already arrived. */
  duplicates = 0;
  /** Frames of an earlier window (stored events drained late, or their duplicates). */
  late = 0;
  /** When the last distinct event arrived. */
  lastAt = 0;
  #base = 0;
  #distinct = true;
  #seen = new Set<number>();

  /**
   * Starts a window whose events are numbered from `base` up. `distinct: false` counts every frame
   * as an event (the raw push loop sends one payload over and over).
   */
  start(base: number, opts: { distinct: boolean } = { distinct: true }): void {
    this.received = 0;
    this.duplicates = 0;
    this.late = 0;
    this.lastAt = 0;
    this.#base = base;
    this.#distinct = opts.distinct;
    this.#seen = new Set();
  }

  hit = (seq: number): void => {
    if (!this.#distinct) {
      this.received++;
      this.lastAt = performance.now();
      return;
    }
    if (seq < this.#base) {
      this.late++;
      return;
    }
    if (this.#seen.has(seq)) {
      this.duplicates++;
      return;
    }
    this.#seen.add(seq);
    this.received++;
    this.lastAt = performance.now();
  };
}

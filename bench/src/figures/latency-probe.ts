import { performance } from 'node:perf_hooks';
import { SampleBuffer } from '../stats.js';
import { DeliveryCounter } from './delivery-counter.js';

/**
 * Figure 1's clock: every event carries a sequence number, and the frame that brings it back is
 * timed against when it was sent, for the measurement in progress. Every fleet's frames and every
 * measurement of the figure go through one probe, so sequence numbers never repeat.
 */
export class LatencyProbe {
  readonly counter = new DeliveryCounter();
  /** The latencies of the measurement in progress, ms. */
  samples = new SampleBuffer(0);
  /** Send times by sequence number (from `#base`), for the frames of the measurement in progress. */
  #sentAt = new Float64Array(0);
  #base = 0;
  #next = 0;

  /** A frame of event `seqNumber` arrived: counted, and timed when it is the measurement's. */
  readonly arrived = (seqNumber: number): void => {
    this.counter.hit();
    const seq = seqNumber - this.#base;
    if (seq >= 0 && seq < this.#sentAt.length) {
      this.samples.push(performance.now() - (this.#sentAt[seq] as number));
    }
  };

  /** A sequence number outside any measurement (calibration): counted, never timed. */
  untimed(): number {
    return this.#next++;
  }

  /**
   * Starts a measurement of `count` events, numbered from the returned base on: fresh samples,
   * the counter at zero.
   */
  start(count: number): number {
    this.#base = this.#next;
    this.#next += count;
    this.#sentAt = new Float64Array(count);
    this.samples = new SampleBuffer(count);
    this.counter.reset();
    return this.#base;
  }

  /** Event `i` of the measurement (base + i) left at `at` (performance.now()). */
  sent(i: number, at: number): void {
    this.#sentAt[i] = at;
  }
}

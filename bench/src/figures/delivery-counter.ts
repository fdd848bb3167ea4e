import { performance } from 'node:perf_hooks';

/** Counts frames arriving at a fleet and when the last one came. */
export class DeliveryCounter {
  received = 0;
  lastAt = 0;

  hit = (): void => {
    this.received++;
    this.lastAt = performance.now();
  };

  reset(): void {
    this.received = 0;
    this.lastAt = 0;
  }
}

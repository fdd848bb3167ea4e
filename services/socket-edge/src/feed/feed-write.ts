import type { Delivery } from '../socket/delivery.js';
import type { Entry } from './feed-entries.js';

/** What a feed does when one of its writes is proven or lost. */
export interface WriteOutcomes {
  /** A write nobody else waited on was proven (by `device`, if the socket had one): delivered. */
  delivered(id: string, device: string | undefined): void;
  /** The write can no longer be proven: its entry's deliveries are lost. */
  failed(entry: Entry): void;
  /** Proven or lost: the socket may have room again, the position may move. */
  settled(): void;
}

/**
 * The delivery of one feed write of `entry`: its waiters (live or drain deliveries of the same
 * event) hear what the socket reports. A catch-up write nobody else waits on is `delivered` once
 * proven (a drain delivery acks the durable consumer, which records that itself).
 */
export class FeedWrite implements Delivery {
  /** A live event's write keeps its proof deadline (LIVE_PROOF_TIMEOUT_MS). */
  readonly live: boolean;
  readonly #entry: Entry;
  readonly #id: string;
  readonly #outcomes: WriteOutcomes;

  constructor(entry: Entry, id: string, outcomes: WriteOutcomes) {
    this.live = entry.waiters.some((d) => d.live);
    this.#entry = entry;
    this.#id = id;
    this.#outcomes = outcomes;
  }

  written(): void {
    for (const d of this.#entry.waiters) d.written();
  }

  overdue(): void {
    for (const d of this.#entry.waiters) d.overdue();
  }

  proven(device?: string): void {
    const entry = this.#entry;
    entry.proven = true;
    const waiters = entry.waiters;
    entry.waiters = [];
    if (waiters.length === 0) this.#outcomes.delivered(this.#id, device);
    for (const d of waiters) d.proven(device);
    this.#outcomes.settled();
  }

  lost(): void {
    this.#outcomes.failed(this.#entry);
    this.#outcomes.settled();
  }
}

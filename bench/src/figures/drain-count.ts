import { performance } from 'node:perf_hooks';

/** Tracks one recipient's drain: distinct event ids seen and when the last expected one came. */
export interface Drain {
  ids: Set<string>;
  doneAt: number;
  /** When its socket opened; infinite if it never did. */
  openAt: number;
  /** The highest sequence number that arrived: the recipient's events are stored in that order. */
  maxSeq: number;
}

/**
 * Counts every arrival of a storm, per recipient (issue 42: every id counted): a first arrival of
 * an id as delivered (while `inBound()` says the time bound has not passed), a second as a
 * duplicate, and a first arrival numbered below an earlier one of the same recipient as out of
 * order. A recipient is complete once `each` distinct ids arrived.
 */
export class DrainCount {
  readonly drains: Drain[];
  complete = 0;
  delivered = 0;
  duplicates = 0;
  outOfOrder = 0;
  readonly #each: number;
  readonly #inBound: () => boolean;

  constructor(recipients: number, each: number, inBound: () => boolean) {
    this.drains = Array.from({ length: recipients }, () => ({
      ids: new Set<string>(),
      doneAt: Number.POSITIVE_INFINITY,
      openAt: Number.POSITIVE_INFINITY,
      maxSeq: -1,
    }));
    this.#each = each;
    this.#inBound = inBound;
  }

  open = (i: number): void => {
    (this.drains[i] as Drain).openAt = performance.now();
  };

  event = (i: number, id: string, seq: number): void => {
    const d = this.drains[i] as Drain;
    if (d.ids.has(id)) {
      this.duplicates++;
      return;
    }
    d.ids.add(id);
    if (seq < d.maxSeq) this.outOfOrder++;
    else d.maxSeq = seq;
    // Only what arrived within the time bound counts (the fleet may still be opening sockets
    // past it: before, events of the late sockets were counted too).
    if (this.#inBound()) this.delivered++;
    if (d.ids.size === this.#each) {
      d.doneAt = performance.now();
      this.complete++;
    }
  };
}

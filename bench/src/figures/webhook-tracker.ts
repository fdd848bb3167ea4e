import type { WebhookArrival } from '../env/webhook-receiver.js';

/**
 * Counts the webhook messages of one measurement window at the receiver: each `webhook-id` once (a
 * second arrival, a retry of a message already answered 204, is a duplicate), by type, and the lag
 * of each from its event's acceptance (the answer to its `POST /notify`, read by the load
 * generator) to its arrival. A message of an event not accepted in the window counts as late.
 */
export class WebhookTracker {
  /** Every message that arrived since the tracker was made, whatever its window (progress). */
  arrivals = 0;
  /** Distinct messages of this window that arrived. */
  received = 0;
  duplicates = 0;
  /** Messages of events not accepted in this window (an earlier window's, still on their way). */
  late = 0;
  /** Messages that arrived before the load generator had read their event's acceptance. */
  beforeAnswer = 0;
  /** When the first and the last distinct message arrived (performance.now()). */
  firstAt = 0;
  lastAt = 0;
  readonly byType = new Map<string, number>();
  /** Acceptance to arrival, ms, of every message whose event's acceptance was recorded. */
  readonly lagsMs: number[] = [];
  #accepted = new Map<string, number>();
  #early = new Map<string, WebhookArrival[]>();
  #seen = new Set<string>();
  #all = false;

  /**
   * Starts a window. `lag: false` counts every message as the window's (figure 7's on/off pair,
   * where only the count matters); with `lag`, only messages of events passed to accepted().
   */
  start(opts: { lag: boolean }): void {
    this.received = 0;
    this.duplicates = 0;
    this.late = 0;
    this.beforeAnswer = 0;
    this.firstAt = 0;
    this.lastAt = 0;
    this.byType.clear();
    this.lagsMs.length = 0;
    this.#accepted = new Map();
    this.#early = new Map();
    this.#seen = new Set();
    this.#all = !opts.lag;
  }

  /** Event `id` was accepted at `at` (performance.now()): its messages belong to this window. */
  accepted(id: string, at: number): void {
    this.#accepted.set(id, at);
    const early = this.#early.get(id);
    if (!early) return;
    this.#early.delete(id);
    for (const a of early) {
      this.beforeAnswer++;
      this.lagsMs.push(Math.max(0, a.at - at));
      this.#count(a);
    }
  }

  hit = (a: WebhookArrival): void => {
    this.arrivals++;
    if (this.#seen.has(a.messageId)) {
      this.duplicates++;
      return;
    }
    this.#seen.add(a.messageId);
    if (this.#all) {
      this.#count(a);
      return;
    }
    const acceptedAt = this.#accepted.get(a.eventId);
    if (acceptedAt === undefined) {
      // Its event's answer may still be on its way to the generator: held until it is read.
      const early = this.#early.get(a.eventId);
      if (early) early.push(a);
      else this.#early.set(a.eventId, [a]);
      return;
    }
    this.lagsMs.push(a.at - acceptedAt);
    this.#count(a);
  };

  /** Ends the window: messages held for an event never accepted in it were an earlier one's. */
  close(): void {
    for (const held of this.#early.values()) this.late += held.length;
    this.#early.clear();
  }

  #count(a: WebhookArrival): void {
    this.received++;
    this.byType.set(a.type, (this.byType.get(a.type) ?? 0) + 1);
    if (this.firstAt === 0 || a.at < this.firstAt) this.firstAt = a.at;
    if (a.at > this.lastAt) this.lastAt = a.at;
  }
}

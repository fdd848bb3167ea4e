/** How an event was sent: the three dispatch doors. */
export type Door = 'notify' | 'batch' | 'nats';

export interface LedgerCounts {
  /** Events answered 200 or 202, by door. */
  accepted: number;
  acceptedBy: Record<Door, number>;
  /** Accepted events that arrived at their recipient at least once. */
  delivered: number;
  /** Copies beyond the first of an accepted event (at-least-once allows them; they are counted). */
  duplicates: number;
  /** Accepted events that never arrived. */
  missing: number;
  /** Events that arrived but were never answered 200/202 (an answer lost to a timeout or fault). */
  unanswered: number;
  /** Refusals by HTTP status (429 and 503 are expected around the restarts). */
  refused: Record<string, number>;
  /** Dispatches with no answer at all (a transport error, a timeout). */
  failed: number;
}

/**
 * Which events were accepted for whom, and which arrived: the soak's delivery check, by event id.
 * An arrival may be recorded before its acceptance (a live event reaches the socket before the
 * 200 reaches the sender), so the two sides are joined only when asked.
 */
export class DeliveryLedger {
  readonly #accepted = new Map<string, { recipient: string; door: Door }>();
  readonly #copies = new Map<string, number>();
  /** Who each id arrived for (one recipient, unless misrouted). */
  readonly #arrivedFor = new Map<string, Set<string>>();
  readonly #refused = new Map<string, number>();
  #failed = 0;

  accept(id: string, recipient: string, door: Door): void {
    this.#accepted.set(id, { recipient, door });
  }

  refuse(status: number): void {
    const key = String(status);
    this.#refused.set(key, (this.#refused.get(key) ?? 0) + 1);
  }

  fail(): void {
    this.#failed++;
  }

  /** One copy of `id` arrived on a socket of `recipient`. */
  arrive(id: string, recipient: string): void {
    this.#copies.set(id, (this.#copies.get(id) ?? 0) + 1);
    const to = this.#arrivedFor.get(id) ?? new Set<string>();
    to.add(recipient);
    this.#arrivedFor.set(id, to);
  }

  /** Who an accepted event is for; undefined when `id` was never answered 200/202. */
  recipientOf(id: string): string | undefined {
    return this.#accepted.get(id)?.recipient;
  }

  /** How many accepted events are for one of `recipients`. */
  acceptedFor(recipients: ReadonlySet<string>): number {
    let n = 0;
    for (const { recipient } of this.#accepted.values()) if (recipients.has(recipient)) n++;
    return n;
  }

  #arrivedAtOwn(id: string, recipient: string): boolean {
    return this.#arrivedFor.get(id)?.has(recipient) === true;
  }

  /** Accepted events not (yet) arrived at their own recipient, with who they are for. */
  missing(): Array<{ id: string; recipient: string }> {
    const out: Array<{ id: string; recipient: string }> = [];
    for (const [id, { recipient }] of this.#accepted) {
      if (!this.#arrivedAtOwn(id, recipient)) out.push({ id, recipient });
    }
    return out;
  }

  /** Events that reached a socket of another recipient than their own: never allowed. */
  misrouted(): string[] {
    const wrong: string[] = [];
    for (const [id, to] of this.#arrivedFor) {
      const own = this.#accepted.get(id)?.recipient;
      if (to.size > 1 || (own !== undefined && !to.has(own))) wrong.push(id);
    }
    return wrong;
  }

  counts(): LedgerCounts {
    const acceptedBy: Record<Door, number> = { notify: 0, batch: 0, nats: 0 };
    let delivered = 0;
    let duplicates = 0;
    for (const [id, { door, recipient }] of this.#accepted) {
      acceptedBy[door]++;
      const copies = this.#copies.get(id) ?? 0;
      if (this.#arrivedAtOwn(id, recipient)) delivered++;
      if (copies > 1) duplicates += copies - 1;
    }
    let unanswered = 0;
    for (const id of this.#copies.keys()) if (!this.#accepted.has(id)) unanswered++;
    return {
      accepted: this.#accepted.size,
      acceptedBy,
      delivered,
      duplicates,
      missing: this.#accepted.size - delivered,
      unanswered,
      refused: Object.fromEntries(this.#refused),
      failed: this.#failed,
    };
  }
}

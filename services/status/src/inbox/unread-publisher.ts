import type { Recipient } from './queries.js';

interface Tickets {
  /** Counts asked for this recipient so far (while any is out). */
  issued: number;
  /** The newest of them whose answer was published. */
  published: number;
  /** Counts asked and not answered yet. */
  out: number;
}

/**
 * Publishes a recipient's unread count after each change, never an older count after a newer one.
 * Two changes close together start two count queries; the second sees at least what the first did
 * (each statement reads what was committed before it began), but their answers may come back in
 * either order, and a stale count published last would leave the badge wrong until the next
 * change. So each query takes a ticket per recipient, and an answer is published only when no
 * later ticket's answer already was. What is held is bounded by the counts in flight: a
 * recipient's entry goes once none of its counts is out. (Within one status process; with several,
 * each one's counts are in order, and the edge drops a connect's count older than a notice.)
 */
export class UnreadPublisher {
  readonly #tickets = new Map<string, Tickets>();
  readonly #count: (recipients: Recipient[]) => Promise<number[]>;
  readonly #publish: (r: Recipient, unread: number) => void;
  readonly #failed: (err: unknown) => void;

  constructor(opts: {
    count: (recipients: Recipient[]) => Promise<number[]>;
    publish: (r: Recipient, unread: number) => void;
    failed: (err: unknown) => void;
  }) {
    this.#count = opts.count;
    this.#publish = opts.publish;
    this.#failed = opts.failed;
  }

  /** Recipients whose counts are out (for tests: it returns to 0). */
  get pending(): number {
    return this.#tickets.size;
  }

  changed(recipients: Recipient[]): void {
    const keys = recipients.map((r) => `${r.account}\u0000${r.recipient}`);
    const mine = keys.map((key) => {
      let t = this.#tickets.get(key);
      if (!t) {
        t = { issued: 0, published: 0, out: 0 };
        this.#tickets.set(key, t);
      }
      t.out++;
      return ++t.issued;
    });
    void this.#count(recipients)
      .then(
        (counts) => {
          recipients.forEach((r, i) => {
            const t = this.#tickets.get(keys[i] as string);
            const ticket = mine[i] as number;
            if (!t || ticket <= t.published) return;
            t.published = ticket;
            this.#publish(r, counts[i] ?? 0);
          });
        },
        (err: unknown) => this.#failed(err),
      )
      .finally(() => {
        for (const key of keys) {
          const t = this.#tickets.get(key);
          if (t && --t.out === 0) this.#tickets.delete(key);
        }
      });
  }
}

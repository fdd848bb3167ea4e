import { isNotFound } from '@herald/nats';
import { subjects } from '@herald/proto';
import type { JetStreamManager } from 'nats';
import { QueueLayout } from './queue-layout.js';

export type Admission =
  /** Store it: the recipient already holds events, or there is room for one more recipient. */
  | { admitted: true }
  /** `recipients` recipients hold events, `max` or more, and this one holds none: refuse it. */
  | { admitted: false; recipients: number };

export interface QueuedRecipientsOptions {
  /** Most recipients the queue holds events for (QUEUE_MAX_RECIPIENTS). */
  max: number;
  /** How long a count of the queue's recipients is reused (plus this instance's stores), ms. */
  cacheMs: number;
  /** Which partition stream holds a recipient. Default: the default layout. */
  layout?: QueueLayout;
  /** Epoch ms; injectable for tests. */
  now?: () => number;
}

const ADMITTED: Admission = { admitted: true };

/**
 * The queue's ceiling on recipients (docs/operations.md, "The ceiling"): how many recipients may
 * have events stored at once. Each costs every NATS node an entry in its stream's subject index,
 * and each that connects while it has some gets a durable consumer (kept until retention's run), so
 * this number, not events, is what a cluster's memory runs out of. A recipient who already holds
 * events is always admitted: only a new one past the ceiling is refused, and nothing stored is
 * touched.
 *
 * 1. The count is the partitions' `num_subjects` (one subject per recipient) added up: a stream
 *    info per partition, in parallel. It is reused for `cacheMs`, and every event this instance
 *    admits meanwhile counts as a new recipient (an upper bound: no lookup while it stays below).
 * 2. At the bound: the recipient's last stored message says whether it already holds events
 *    (admitted); if not, a fresh count decides. A count found at the ceiling is reused for
 *    `cacheMs`, so a flood of refusals costs one count a window, not one each.
 *
 * Like the per-recipient counts, other instances' new recipients within a window are the tolerance.
 */
export class QueuedRecipients {
  readonly #jsm: () => Promise<JetStreamManager>;
  readonly #max: number;
  readonly #cacheMs: number;
  readonly #layout: QueueLayout;
  readonly #now: () => number;
  /** The last count, plus what this instance admitted since (`full`: it was at the ceiling). */
  #kept: { recipients: number; at: number; full: boolean } | undefined;

  constructor(jsm: () => Promise<JetStreamManager>, opts: QueuedRecipientsOptions) {
    this.#jsm = jsm;
    this.#max = opts.max;
    this.#cacheMs = opts.cacheMs;
    this.#layout = opts.layout ?? new QueueLayout();
    this.#now = opts.now ?? Date.now;
  }

  get max(): number {
    return this.#max;
  }

  /** Whether one more event for this recipient may be stored. Throws when JetStream does not answer. */
  async admit(account: string, recipient: string): Promise<Admission> {
    const kept = this.#fresh();
    if (kept && !kept.full && kept.recipients < this.#max) {
      kept.recipients++;
      return ADMITTED;
    }
    const jsm = await this.#jsm();
    if (await holdsEvents(jsm, this.#layout.streamOf(account, recipient), account, recipient)) {
      return ADMITTED;
    }
    if (kept?.full) return { admitted: false, recipients: kept.recipients };
    const recipients = await this.#count(jsm);
    const full = recipients >= this.#max;
    this.#keep(full ? recipients : recipients + 1, full);
    return full ? { admitted: false, recipients } : ADMITTED;
  }

  /** Recipients with events stored now: the partitions' subject counts added up. */
  async #count(jsm: JetStreamManager): Promise<number> {
    const counts = await Promise.all(
      this.#layout.streams.map(async (stream) => {
        try {
          return (await jsm.streams.info(stream)).state.num_subjects ?? 0;
        } catch (err) {
          // A partition not created yet holds nobody.
          if (isNotFound(err)) return 0;
          throw err;
        }
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  #fresh() {
    const kept = this.#kept;
    return kept && this.#now() - kept.at < this.#cacheMs ? kept : undefined;
  }

  #keep(recipients: number, full: boolean): void {
    if (this.#cacheMs > 0) this.#kept = { recipients, at: this.#now(), full };
  }
}

async function holdsEvents(
  jsm: JetStreamManager,
  stream: string,
  account: string,
  recipient: string,
): Promise<boolean> {
  try {
    await jsm.streams.getMessage(stream, { last_by_subj: subjects.queue(account, recipient) });
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

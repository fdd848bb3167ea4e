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
 *    info per partition, in parallel, shared by the events that wait for it. It is reused for
 *    `cacheMs`, and every event this instance admits meanwhile counts as a new recipient (an upper
 *    bound): below the ceiling, an event costs no request at all.
 * 2. At the bound: the recipient's last stored message says whether it already holds events
 *    (admitted); if not, a count read afresh decides, unless the kept one was read at the ceiling
 *    and nothing was admitted since (a flood of refusals costs one count a window, not one each).
 *
 * Like the per-recipient counts, other instances' new recipients within a window are the tolerance.
 */
export class QueuedRecipients {
  readonly #jsm: () => Promise<JetStreamManager>;
  readonly #max: number;
  readonly #cacheMs: number;
  readonly #layout: QueueLayout;
  readonly #now: () => number;
  /** The last count plus what this instance admitted since (`read`: nothing admitted since). */
  #kept: Kept | undefined;
  /** The count being read, shared by every event waiting for it. */
  #counting: Promise<Kept> | undefined;

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
    let kept = this.#fresh();
    const counted = !kept;
    kept ??= await this.#count();
    if (this.#take(kept)) return ADMITTED;
    const jsm = await this.#jsm();
    if (await holdsEvents(jsm, this.#layout.streamOf(account, recipient), account, recipient)) {
      return ADMITTED;
    }
    if (!counted && !kept.read) {
      kept = await this.#count();
      if (this.#take(kept)) return ADMITTED;
    }
    return { admitted: false, recipients: kept.recipients };
  }

  /** Admits one more recipient against the count when it is below the ceiling. */
  #take(kept: Kept): boolean {
    if (kept.recipients >= this.#max) return false;
    kept.recipients++;
    kept.read = false;
    return true;
  }

  #fresh(): Kept | undefined {
    const kept = this.#kept;
    return kept && this.#now() - kept.at < this.#cacheMs ? kept : undefined;
  }

  #count(): Promise<Kept> {
    this.#counting ??= this.#read().finally(() => {
      this.#counting = undefined;
    });
    return this.#counting;
  }

  /** Recipients with events stored now: the partitions' subject counts added up. */
  async #read(): Promise<Kept> {
    const jsm = await this.#jsm();
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
    const kept = { recipients: counts.reduce((a, b) => a + b, 0), at: this.#now(), read: true };
    if (this.#cacheMs > 0) this.#kept = kept;
    return kept;
  }
}

interface Kept {
  recipients: number;
  /** Epoch ms of the read. */
  at: number;
  /** True while nothing was admitted since the read: then it is exact for this instance. */
  read: boolean;
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

import { isNotFound } from '@herald/nats';
import { subjects } from '@herald/proto';
import type { JetStreamManager, MsgRequest } from 'nats';
import { QueueLayout } from './queue-layout.js';
import { queueConsumerName } from './stream-config.js';

/** Most recipients whose exact count one instance remembers. */
const MAX_CACHED = 10_000;

export type Room =
  /** The recipient may take one more event. */
  | { full: false }
  /** `depth` undelivered events wait, `cap` or more: refuse the event. */
  | { full: true; depth: number };

export interface RecipientDepthOptions {
  /** How long an exact count from a subject scan is reused (plus this instance's stores), ms. */
  scanCacheMs: number;
  /** Epoch ms; injectable for tests. */
  now?: () => number;
  /** Which partition stream holds a recipient. Default: the default layout. */
  layout?: QueueLayout;
}

/**
 * Decides whether a recipient's offline queue holds fewer undelivered events than a plan's cap,
 * before ingress stores one more, cheaply and never by dropping anything:
 *
 * 1. Three small requests in parallel (one round trip): the recipient's consumer info, and the
 *    first and last stored message on their subject.
 * 2. A consumer exists (an edge drained them before): its `num_pending + num_ack_pending` is the
 *    exact count of events not yet acked.
 * 3. No consumer: every stored message on the subject is undelivered (retention purges before it
 *    reaps a consumer). Nothing stored: 0. Else `last − first + 1` is an upper bound of their count
 *    (other recipients' messages interleave); below the cap settles it.
 * 4. Only when that bound reaches the cap: the exact count from the stream's per-subject totals,
 *    which costs the server a pass over every subject of the stream, growing with the recipients
 *    queued (docs/operations.md), so it is reused for `scanCacheMs` and advanced by
 *    this instance's own stores.
 * 5. A count below the cap from steps 2–3 is reused the same way: for `scanCacheMs`, advanced by
 *    this instance's stores, while it stays below the cap. A burst of events for one offline
 *    recipient then costs three reads per second instead of three per event. Deliveries only make
 *    a kept count too high (never a refusal it would not have made later); other instances' stores
 *    within the window are the documented tolerance, as for a kept scan.
 */
export class RecipientDepth {
  readonly #jsm: () => Promise<JetStreamManager>;
  readonly #opts: RecipientDepthOptions;
  readonly #now: () => number;
  readonly #layout: QueueLayout;
  /** Counts by subject: exact (a scan; reused full or not) or below the cap when read (reused while below). */
  readonly #known = new Map<string, { count: number; exact: boolean; at: number }>();

  constructor(jsm: () => Promise<JetStreamManager>, opts: RecipientDepthOptions) {
    this.#jsm = jsm;
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
    this.#layout = opts.layout ?? new QueueLayout();
  }

  async room(account: string, recipient: string, cap: number): Promise<Room> {
    const subject = subjects.queue(account, recipient);
    const known = this.#known.get(subject);
    if (known && this.#now() - known.at < this.#opts.scanCacheMs) {
      if (known.count < cap) return { full: false };
      if (known.exact) return { full: true, depth: known.count };
    }
    const jsm = await this.#jsm();
    const stream = this.#layout.streamOf(account, recipient);
    const [consumer, first, last] = await Promise.all([
      orMissing(jsm.consumers.info(stream, queueConsumerName(account, recipient))),
      // The server's MSG.GET takes next_by_subj (2.9+); nats.js 2.29's types omit it.
      orMissing(
        jsm.streams.getMessage(stream, {
          next_by_subj: subject,
          seq: 1,
        } as unknown as MsgRequest),
      ),
      orMissing(jsm.streams.getMessage(stream, { last_by_subj: subject })),
    ]);
    const cheap = consumer
      ? consumer.num_pending + consumer.num_ack_pending
      : !first || !last
        ? 0
        : last.seq - first.seq + 1;
    if (cheap < cap) {
      this.#remember(subject, cheap, false);
      return { full: false };
    }
    if (consumer) return verdict(cheap, cap);
    const info = await jsm.streams.info(stream, { subjects_filter: subject });
    const count = info.state.subjects?.[subject] ?? 0;
    this.#remember(subject, count, true);
    return verdict(count, cap);
  }

  /** This instance stored one more event for the recipient: a cached count follows it. */
  stored(account: string, recipient: string): void {
    // Nothing cached (no plan below the stream's cap looked yet): no subject to build.
    if (this.#known.size === 0) return;
    const known = this.#known.get(subjects.queue(account, recipient));
    if (known) known.count++;
  }

  #remember(subject: string, count: number, exact: boolean): void {
    if (this.#opts.scanCacheMs <= 0) return;
    this.#known.delete(subject);
    this.#known.set(subject, { count, exact, at: this.#now() });
    if (this.#known.size > MAX_CACHED) {
      const oldest = this.#known.keys().next().value;
      if (oldest !== undefined) this.#known.delete(oldest);
    }
  }
}

function verdict(depth: number, cap: number): Room {
  return depth >= cap ? { full: true, depth } : { full: false };
}

/** The result, or undefined when JetStream answered "not found" (404). Other errors propagate. */
async function orMissing<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

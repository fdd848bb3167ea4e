/**
 * Recorded ack floors: what lets a recipient consumer keep its state in nats-server's memory
 * (QUEUE_CONSUMER_MEMORY, the edge's default) without a nats-server restart delivering again
 * everything it had acked.
 *
 * A memory-state consumer is not written anywhere, so a restart loses it, and the edge re-creates
 * it from the recipient's first stored event. Acked events stay stored until retention deletes
 * them (weekly), so without a record all of them would come again. The edge therefore records,
 * once a drain has caught up, one acked event of the recipient at or below the consumer's ack
 * floor as the server reports it (a KV entry per recipient, one small append, where a file-state
 * consumer rewrites a state file up to 10 times a second while it drains); an edge that later
 * finds the recipient's consumer new moves it past that event before consuming (a consumer reset,
 * nats-server 2.14+), so its ack floor is the recorded one again. Nothing is deleted: acked events
 * stay stored until retention, which is the window in which the recipient's other devices catch
 * up from their own positions. What was acked after the last record is delivered again: at least
 * once, clients drop repeats by id.
 */

import { ensureRecordBucket, isNotFound, jsApi, KvRecords, NatsRequester } from '@herald/nats';
import { assertToken, EventHeaders, QueueAckFloor } from '@herald/proto';
import type { ConsumerInfo, JetStreamClient, JetStreamManager, NatsConnection } from 'nats';

/** The KV bucket of recorded floors, one key per recipient (stream `KV_herald_queue_floors`). */
export const QUEUE_FLOOR_BUCKET = 'herald_queue_floors';
/** How long a floor is kept after its last write, days (it is rewritten at every drain). */
export const DEFAULT_QUEUE_FLOOR_TTL_DAYS = 30;

const MS_PER_DAY = 86_400_000;
const EMPTY = new Uint8Array(0);

export interface QueueFloorBucketOptions {
  /** Replicas, as the queue streams'. Default 1. */
  replicas?: number;
  /** Days a floor is kept after its last write (the bucket's max_age). Default 30. */
  ttlDays?: number;
}

/** The floor's key: `<account>.<recipient>`, both checked as subject tokens. */
export function queueFloorKey(account: string, recipient: string): string {
  return `${assertToken('account', account)}.${assertToken('recipient', recipient)}`;
}

/** Parses a floor's key back into its account and recipient; undefined for any other key. */
export function parseQueueFloorKey(
  key: string,
): { account: string; recipient: string } | undefined {
  const m = /^([0-9a-f-]{36})\.([0-9a-f-]{36})$/.exec(key);
  return m?.[1] && m[2] ? { account: m[1], recipient: m[2] } : undefined;
}

/**
 * Creates the floor bucket (file storage, one value per key, direct gets), or leaves an existing
 * one as it is. Called with the queue streams (ensureQueueStream).
 */
export async function ensureQueueFloorBucket(
  js: JetStreamClient,
  opts: QueueFloorBucketOptions = {},
): Promise<void> {
  await ensureRecordBucket(js, QUEUE_FLOOR_BUCKET, {
    replicas: opts.replicas,
    ttlMs: (opts.ttlDays ?? DEFAULT_QUEUE_FLOOR_TTL_DAYS) * MS_PER_DAY,
  });
}

/**
 * The socket edge's side of the bucket: read a recipient's floor, record a new one (a
 * {@link KvRecords} of floors; the bucket is ingress's to create). A failed call is the caller's
 * to log, and a missing floor only means acked events may come again.
 */
export class QueueFloors {
  readonly #records: KvRecords<QueueAckFloor>;
  readonly #requester: NatsRequester;
  readonly #timeoutMs: number;

  /** @param requester the service's own, when it has one (else one of its own is made) */
  constructor(nc: NatsConnection, timeoutMs: number, requester = new NatsRequester(nc)) {
    this.#records = new KvRecords(nc, QUEUE_FLOOR_BUCKET, QueueAckFloor, { timeoutMs, requester });
    this.#requester = requester;
    this.#timeoutMs = timeoutMs;
  }

  /** The recipient's recorded floor; undefined when none is (or it does not parse). */
  async read(account: string, recipient: string): Promise<QueueAckFloor | undefined> {
    return this.#records.read(queueFloorKey(account, recipient));
  }

  /** Every recorded key, once each (retention's walk; an ordered consumer on the bucket). */
  keys(): Promise<AsyncIterable<string>> {
    return this.#records.keys();
  }

  /** Records `floor` as the recipient's (stored by JetStream when this resolves). */
  async record(account: string, recipient: string, floor: QueueAckFloor): Promise<void> {
    await this.#records.put(queueFloorKey(account, recipient), floor);
  }

  /**
   * A consumer's ack floor (its `ack_floor.stream_seq`) and whether its state is in memory, from
   * `CONSUMER.INFO` over the NatsRequester; undefined when the consumer does not exist. No answer,
   * or any other error, is HeraldError `unavailable`.
   */
  async consumerFloor(
    stream: string,
    consumer: string,
  ): Promise<{ ackFloor: number; memoryState: boolean } | undefined> {
    const info = await jsApi<{
      ack_floor?: { stream_seq?: number };
      config?: { mem_storage?: boolean };
    }>(this.#requester, `$JS.API.CONSUMER.INFO.${stream}.${consumer}`, EMPTY, this.#timeoutMs);
    if (!info) return undefined;
    return {
      ackFloor: info.ack_floor?.stream_seq ?? 0,
      memoryState: info.config?.mem_storage === true,
    };
  }

  /**
   * Resets a consumer's delivery state to `floor.seq + 1` (`CONSUMER.RESET`, nats-server 2.14+,
   * ADR-60): as if created with `opt_start_seq` there, its ack floor then reads `floor.seq`, while
   * its config (DeliverAll) stays the one every edge creates, so the next connect's create still
   * matches it in one call. Answers the consumer's info after the reset. Refused, or no answer,
   * is HeraldError `unavailable`; so is a consumer that does not exist (the reset subject is its
   * leader's own subscription: nobody answers, and the call waits out its timeout).
   */
  async resumeAfter(
    stream: string,
    consumer: string,
    floor: QueueAckFloor,
  ): Promise<ConsumerInfo | undefined> {
    return jsApi<ConsumerInfo & { reset_seq: number }>(
      this.#requester,
      `$JS.API.CONSUMER.RESET.${stream}.${consumer}`,
      new TextEncoder().encode(JSON.stringify({ seq: floor.seq + 1 })),
      this.#timeoutMs,
    );
  }
}

/**
 * Whether a recorded floor is of this stream: the event at `floor.seq` must be there, on the
 * recipient's subject, with the recorded id. A stream deleted and made again reuses sequences,
 * and a floor of its predecessor would otherwise skip undelivered events; when that event is gone
 * (retention deleted it, and everything before it with it) there is nothing to skip.
 */
export async function floorStands(
  jsm: JetStreamManager,
  stream: string,
  subject: string,
  floor: QueueAckFloor,
): Promise<boolean> {
  if (floor.stream !== stream) return false;
  try {
    const at = await jsm.streams.getMessage(stream, { seq: floor.seq });
    return at.subject === subject && at.header?.get(EventHeaders.id) === floor.id;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

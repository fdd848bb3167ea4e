import { HeraldError } from '@herald/proto';
import type { JetStreamClient, KV, NatsConnection } from 'nats';
import { noAnswer, type ReplySchema, replyJson, whyUnanswered } from './json-answer.js';
import { NatsRequester } from './nats-requester.js';

const EMPTY = new Uint8Array(0);
/** The header nats.js's KV puts on a delete or purge marker (a value has none). */
const KV_OPERATION = 'KV-Operation';

export interface RecordBucketOptions {
  /** Replicas, as the streams beside it. Default 1. */
  replicas?: number;
  /** How long a record is kept after its last write (the bucket's max_age), ms. */
  ttlMs: number;
}

/**
 * Creates a record bucket (file storage, one value per key, direct gets, the TTL), or leaves an
 * existing one as it is: its TTL was the operator's choice when it was made.
 */
export async function ensureRecordBucket(
  js: JetStreamClient,
  bucket: string,
  opts: RecordBucketOptions,
): Promise<void> {
  await js.views.kv(bucket, {
    history: 1,
    replicas: opts.replicas ?? 1,
    ttl: opts.ttlMs,
    allow_direct: true,
  });
}

/**
 * A KV bucket of JSON records, one per key, each read as `schema` reads it: the read is a direct
 * get of the key's last value and the write a JetStream publish to the key's subject (what
 * `kv.get` and `kv.put` send), both over the NatsRequester, because the usual read in a reconnect
 * storm, a 404 (nothing recorded yet), becomes a NatsError with a captured stack inside nats.js.
 * The bucket is bound without an API call (it is made by {@link ensureRecordBucket}).
 *
 * A missing, deleted or unreadable record reads as undefined, and so does every record of a
 * bucket that does not exist. Anything else that fails is "no answer": HeraldError `unavailable`.
 */
export class KvRecords<T> {
  readonly bucket: string;
  readonly #nc: NatsConnection;
  readonly #requester: NatsRequester;
  readonly #schema: ReplySchema<T>;
  readonly #timeoutMs: number;
  /** The subject prefixes of a key's direct get and of its write. */
  readonly #get: string;
  readonly #put: string;
  #kv: Promise<KV> | undefined;

  /** @param opts.requester the service's own, when it has one (else one of its own is made) */
  constructor(
    nc: NatsConnection,
    bucket: string,
    schema: ReplySchema<T>,
    opts: { timeoutMs: number; requester?: NatsRequester | undefined },
  ) {
    this.bucket = bucket;
    this.#nc = nc;
    this.#requester = opts.requester ?? new NatsRequester(nc);
    this.#schema = schema;
    this.#timeoutMs = opts.timeoutMs;
    this.#get = `$JS.API.DIRECT.GET.KV_${bucket}.$KV.${bucket}.`;
    this.#put = `$KV.${bucket}.`;
  }

  /** The key's record; undefined when none is (or its value is not one). */
  async read(key: string): Promise<T | undefined> {
    const subject = this.#get + key;
    const outcome = await this.#requester.request(subject, EMPTY, undefined, this.#timeoutMs);
    // Nobody serves the bucket's direct gets: it does not exist, so nothing was recorded in it.
    if (outcome.kind === 'no_responders') return undefined;
    if (outcome.kind !== 'reply') throw noAnswer(subject, whyUnanswered(outcome, this.#timeoutMs));
    const { msg } = outcome;
    const code = msg.headers?.code ?? 0;
    if (code === 404) return undefined;
    if (code >= 400) {
      throw noAnswer(subject, `JetStream answered ${code} ${msg.headers?.description ?? ''}`);
    }
    // A deleted or purged key's last value is its marker.
    if (msg.headers?.get(KV_OPERATION) || msg.data.length === 0) return undefined;
    const parsed = this.#schema.safeParse(replyJson(msg));
    return parsed.success ? parsed.data : undefined;
  }

  /**
   * Records `record` as the key's (stored by JetStream when this resolves). A RangeError when it is
   * not a record of this bucket; HeraldError `unavailable` when JetStream did not store it.
   */
  async put(key: string, record: T): Promise<void> {
    const parsed = this.#schema.safeParse(record);
    if (!parsed.success)
      throw new RangeError(`${this.bucket}: not a record of the bucket (${key})`);
    const subject = this.#put + key;
    const outcome = await this.#requester.request(
      subject,
      Buffer.from(JSON.stringify(parsed.data)),
      undefined,
      this.#timeoutMs,
    );
    if (outcome.kind !== 'reply') throw noAnswer(subject, whyUnanswered(outcome, this.#timeoutMs));
    const ack = replyJson(outcome.msg) as
      | { seq?: unknown; error?: { description?: string } }
      | undefined;
    if (typeof ack?.seq !== 'number') {
      throw new HeraldError(
        'unavailable',
        `${this.bucket}: ${key} not stored: ${ack?.error?.description ?? 'no publish ack'}`,
      );
    }
  }

  /** Every key with a record, once each (an ordered consumer on the bucket, through nats.js). */
  async keys(): Promise<AsyncIterable<string>> {
    this.#kv ??= this.#nc
      .jetstream()
      .views.kv(this.bucket, { bindOnly: true, allow_direct: true, timeout: this.#timeoutMs })
      .catch((err: unknown) => {
        this.#kv = undefined;
        throw err;
      });
    return (await this.#kv).keys();
  }
}

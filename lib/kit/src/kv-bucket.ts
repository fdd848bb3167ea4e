import type { JetStreamClient, JetStreamManager, KV } from 'nats';

const NS_PER_MS = 1_000_000;
/** JetStream's own default dedup window; a KV stream keeps it unless its TTL is shorter. */
const MAX_DUPLICATE_WINDOW_MS = 120_000;

export interface KvBucketOptions {
  /** Bucket-wide TTL of an entry since its last write, ms (KV on 2.9 has no per-key TTL). */
  ttlMs: number;
  /** 1 on a single server, 3 in a cluster. */
  replicas: number;
}

/**
 * Creates a KV bucket holding only each key's latest value (history 1) with a bucket-wide TTL, or
 * brings an existing bucket's TTL in line with the configuration (a changed TTL takes effect on
 * restart). Safe to call from several instances at once.
 */
export async function ensureKvBucket(
  js: JetStreamClient,
  jsm: JetStreamManager,
  bucket: string,
  opts: KvBucketOptions,
): Promise<KV> {
  const kv = await js.views.kv(bucket, { history: 1, ttl: opts.ttlMs, replicas: opts.replicas });
  const stream = `KV_${bucket}`;
  const { config } = await jsm.streams.info(stream);
  const maxAge = opts.ttlMs * NS_PER_MS;
  if (config.max_age !== maxAge) {
    await jsm.streams.update(stream, {
      ...config,
      max_age: maxAge,
      // The server refuses a dedup window longer than max_age.
      duplicate_window: Math.min(opts.ttlMs, MAX_DUPLICATE_WINDOW_MS) * NS_PER_MS,
    });
  }
  return kv;
}

import { isWrongLastSequence } from '@herald/nats';
import { type JetStreamClient, type KV, StorageType } from 'nats';
import { z } from 'zod';

/** KV bucket holding the run lock. Bucket-wide TTL (the only kind 2.9 has) = the lock's lifetime. */
export const LOCK_BUCKET = 'herald_retention';
const LOCK_KEY = 'run-lock';

export const LockRecord = z.object({
  holder: z.string(),
  run_id: z.string(),
  started_at: z.string(),
});
export type LockRecord = z.infer<typeof LockRecord>;

export type Acquired = { ok: true; lease: Lease } | { ok: false; holder: LockRecord | undefined };

/**
 * Mutual exclusion between retention instances through one NATS KV key. `create` succeeds only
 * when the key is absent, so exactly one instance wins; the winner refreshes the key (a
 * compare-and-set on its revision) well within the bucket's TTL. A holder that dies stops
 * refreshing and the key expires with the TTL, freeing the lock. A holder that stalls past the
 * TTL finds its next refresh refused and stops its run. Correctness never rests on the lock (every
 * step re-reads the consumer first, so two overlapping runs are safe); it only saves the work.
 */
export class RunLock {
  readonly #kv: KV;
  readonly ttlMs: number;

  private constructor(kv: KV, ttlMs: number) {
    this.#kv = kv;
    this.ttlMs = ttlMs;
  }

  /**
   * Opens (or creates) the lock bucket. An existing bucket keeps its TTL, which the lease follows.
   * Memory storage: the lock is ephemeral anyway, and a JetStream whose file storage is full (when
   * retention is needed most) still accepts it. `replicas` (NATS_REPLICAS) applies when the bucket
   * is created: 3 in a cluster, so the lock outlives the node that held it.
   */
  static async open(js: JetStreamClient, ttlMs: number, replicas = 1): Promise<RunLock> {
    const kv = await js.views.kv(LOCK_BUCKET, {
      ttl: ttlMs,
      history: 1,
      storage: StorageType.Memory,
      replicas,
    });
    const status = await kv.status();
    return new RunLock(kv, status.ttl > 0 ? status.ttl : ttlMs);
  }

  async acquire(record: LockRecord): Promise<Acquired> {
    const data = JSON.stringify(record);
    try {
      const revision = await this.#kv.create(LOCK_KEY, data);
      return { ok: true, lease: new Lease(this.#kv, data, revision, this.ttlMs) };
    } catch (err) {
      if (!isWrongLastSequence(err)) throw err;
      return { ok: false, holder: await this.holder() };
    }
  }

  async holder(): Promise<LockRecord | undefined> {
    const entry = await this.#kv.get(LOCK_KEY);
    if (entry?.operation !== 'PUT') return undefined;
    const parsed = LockRecord.safeParse(safeJson(entry.string()));
    return parsed.success ? parsed.data : undefined;
  }
}

/** A held lock: refreshed in the background until released or lost. */
export class Lease {
  readonly #kv: KV;
  readonly #data: string;
  readonly #ttlMs: number;
  #revision: number;
  #lastRefresh = Date.now();
  #lost = false;
  #timer: NodeJS.Timeout | undefined;
  #refreshing: Promise<void> | undefined;

  constructor(kv: KV, data: string, revision: number, ttlMs: number) {
    this.#kv = kv;
    this.#data = data;
    this.#revision = revision;
    this.#ttlMs = ttlMs;
    this.#timer = setInterval(
      () => {
        this.#refreshing ??= this.refresh().finally(() => {
          this.#refreshing = undefined;
        });
      },
      Math.max(100, Math.floor(ttlMs / 3)),
    );
    this.#timer.unref();
  }

  /** True once the lock may be someone else's: stop at the next safe point. */
  get lost(): boolean {
    if (!this.#lost && Date.now() - this.#lastRefresh >= this.#ttlMs) this.#lost = true;
    return this.#lost;
  }

  async refresh(): Promise<void> {
    if (this.#lost) return;
    try {
      this.#revision = await this.#kv.update(LOCK_KEY, this.#data, this.#revision);
      this.#lastRefresh = Date.now();
    } catch (err) {
      // Someone else holds it now (ours expired). Any other failure is retried until the TTL runs out.
      if (isWrongLastSequence(err)) this.#lost = true;
    }
  }

  async release(): Promise<void> {
    clearInterval(this.#timer);
    await this.#refreshing;
    if (this.#lost) return;
    this.#lost = true;
    try {
      await this.#kv.delete(LOCK_KEY, { previousSeq: this.#revision });
    } catch {
      // Expires with the TTL anyway.
    }
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

import type { Logger } from '@herald/kit';
import type { KV, KvEntry } from 'nats';
import { ALIVE_POOL, EdgeLiveness } from './edge-liveness.js';

/** The KV bucket every edge writes its per-account socket counts to. */
export const CONNECTIONS_BUCKET = 'herald_connections';

/** Delay before re-opening a watch that ended, or retrying a failed flush, ms. */
const RETRY_MS = 1000;
/** KV writes in flight at once while flushing: a refresh of many accounts goes out in waves. */
const WRITE_CONCURRENCY = 256;

export interface ConnectionCountsOptions {
  /** This process's id: the last token of every key it writes. No dots. */
  edgeId: string;
  /** The bucket's TTL: an edge count not refreshed for this long no longer counts, ms. */
  ttlMs: number;
  /** How often this edge re-writes its counts so they outlive the TTL, ms. */
  refreshMs: number;
  /** How often this edge writes its heartbeat, ms (see {@link EdgeLiveness}). */
  aliveIntervalMs: number;
  /** How long after its last heartbeat another edge's counts stop counting, ms. */
  aliveTimeoutMs: number;
  logger: Logger;
  /** Epoch ms; injectable for tests. */
  now?: () => number;
}

interface Remote {
  count: number;
  /** When this edge last heard of the count (local clock), epoch ms. */
  seenAt: number;
}

/**
 * Per-pool socket counts across every edge, in the NATS KV bucket `herald_connections`. This
 * edge writes one key per pool it holds sockets in, `<pool>.<edgeId>` = its count, on every change
 * (coalesced: one write in flight, the latest value next) and every `refreshMs`; it deletes the
 * key when the count drops to 0. It watches the bucket to keep every other edge's counts in
 * memory, so asking for a pool's total costs no round trip.
 *
 * KV on nats-server 2.9 has only a bucket-wide TTL and a watch is not told when an entry expires,
 * so each remote count is also aged out here once it has not been refreshed for `ttlMs`: a
 * crashed edge's sockets stop counting within the TTL, whatever the bucket does.
 */
export class ConnectionCounts {
  readonly #opts: ConnectionCountsOptions;
  readonly #now: () => number;
  readonly #own = new Map<string, number>();
  readonly #remote = new Map<string, Map<string, Remote>>();
  readonly #dirty = new Set<string>();
  readonly #liveness: EdgeLiveness;
  #kv: KV | undefined;
  #flushing: Promise<void> | undefined;
  #watch: { stop(): void } | undefined;
  #timers: NodeJS.Timeout[] = [];
  #retry: NodeJS.Timeout | undefined;
  #closed = false;
  #warned = false;

  constructor(opts: ConnectionCountsOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
    this.#liveness = new EdgeLiveness({
      edgeId: opts.edgeId,
      intervalMs: opts.aliveIntervalMs,
      timeoutMs: opts.aliveTimeoutMs,
      now: this.#now,
    });
  }

  /** Sockets counted in `pool` on every edge: this edge's own plus every live remote count. */
  total(pool: string): number {
    let sum = this.#own.get(pool) ?? 0;
    const edges = this.#remote.get(pool);
    if (!edges) return sum;
    const now = this.#now();
    for (const [edge, remote] of edges) {
      const alive = this.#liveness.alive(edge);
      if (alive === false || now - remote.seenAt > this.#opts.ttlMs) edges.delete(edge);
      else sum += remote.count;
    }
    if (edges.size === 0) this.#remote.delete(pool);
    return sum;
  }

  /** Edges alive as far as this edge has heard (their heartbeats), itself included. */
  edgesAlive(): number {
    return 1 + this.#liveness.othersAlive();
  }

  /** This edge's sockets in `pool`. */
  own(pool: string): number {
    return this.#own.get(pool) ?? 0;
  }

  /** Changes this edge's count of `pool` and publishes it (coalesced). */
  add(pool: string, delta: number): void {
    const next = Math.max(0, (this.#own.get(pool) ?? 0) + delta);
    if (next === 0) this.#own.delete(pool);
    else this.#own.set(pool, next);
    this.#dirty.add(pool);
    void this.#flush();
  }

  /**
   * Starts watching the bucket and refreshing this edge's counts. Until the bucket is bound (and
   * while it is unreachable) admission uses what is known: this edge's counts and the last remote
   * ones, which age out. A cap is a plan limit, not a security boundary, so an outage of
   * JetStream must not stop sockets from opening.
   */
  start(kv: KV): void {
    if (this.#closed) return;
    this.#kv = kv;
    this.#liveness.start(kv, (err) => this.#warnOnce(err, 'could not write the edge heartbeat'));
    for (const pool of this.#own.keys()) this.#dirty.add(pool);
    void this.#flush();
    void this.#startWatch();
    const refresh = setInterval(() => {
      for (const pool of this.#own.keys()) this.#dirty.add(pool);
      void this.#flush();
    }, this.#opts.refreshMs);
    refresh.unref();
    // Remote counts age out in total(); this sweep also forgets pools nobody asks about.
    const sweep = setInterval(() => {
      for (const pool of [...this.#remote.keys()]) this.total(pool);
    }, this.#opts.ttlMs);
    sweep.unref();
    this.#timers.push(refresh, sweep);
  }

  /** Stops watching and refreshing, and deletes this edge's keys so its counts drop at once. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const t of this.#timers) clearInterval(t);
    clearTimeout(this.#retry);
    this.#watch?.stop();
    await this.#flushing;
    const kv = this.#kv;
    await this.#liveness.stop(kv);
    if (!kv) return;
    const pools = new Set([...this.#own.keys(), ...this.#dirty]);
    await Promise.all(
      [...pools].map((pool) => kv.delete(this.#keyOf(pool)).catch(() => undefined)),
    );
  }

  #keyOf(pool: string): string {
    return `${pool}.${this.#opts.edgeId}`;
  }

  /** Writes every dirty pool; one flush at a time, and whatever changed meanwhile right after. */
  #flush(): Promise<void> {
    if (this.#flushing || !this.#kv || this.#closed) return this.#flushing ?? Promise.resolve();
    const kv = this.#kv;
    this.#flushing = (async () => {
      while (this.#dirty.size > 0 && !this.#closed) {
        const pools = [...this.#dirty];
        this.#dirty.clear();
        const failed: string[] = [];
        for (let i = 0; i < pools.length; i += WRITE_CONCURRENCY) {
          await Promise.all(
            pools.slice(i, i + WRITE_CONCURRENCY).map(async (pool) => {
              const count = this.#own.get(pool) ?? 0;
              try {
                if (count === 0) await kv.delete(this.#keyOf(pool));
                else await kv.put(this.#keyOf(pool), String(count));
              } catch (err) {
                failed.push(pool);
                this.#warnOnce(err, 'could not publish connection counts: retrying');
              }
            }),
          );
        }
        if (failed.length > 0) {
          for (const pool of failed) this.#dirty.add(pool);
          this.#scheduleRetry();
          return;
        }
        this.#warned = false;
      }
    })().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  #scheduleRetry(): void {
    if (this.#closed || this.#retry) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.#flush();
    }, RETRY_MS);
    this.#retry.unref();
  }

  async #startWatch(): Promise<void> {
    const kv = this.#kv;
    if (!kv || this.#closed) return;
    let initialised = false;
    try {
      const iter = await kv.watch({
        key: '>',
        initializedFn: () => {
          initialised = true;
        },
      });
      this.#watch = iter;
      if (this.#closed) {
        iter.stop();
        return;
      }
      for await (const entry of iter) this.#apply(entry, initialised);
    } catch (err) {
      this.#warnOnce(err, 'connection count watch failed: restarting');
    }
    if (this.#closed) return;
    // The watch ended (connection closed, stream gone): open it again.
    const timer = setTimeout(() => void this.#startWatch(), RETRY_MS);
    timer.unref();
    this.#timers.push(timer);
  }

  #apply(entry: KvEntry, live: boolean): void {
    const dot = entry.key.lastIndexOf('.');
    if (dot <= 0) return;
    const pool = entry.key.slice(0, dot);
    const edge = entry.key.slice(dot + 1);
    if (edge === this.#opts.edgeId) return;
    const now = this.#now();
    if (pool === ALIVE_POOL) {
      // Replayed heartbeats date from their write (server clock, never in the future).
      const at = live ? now : Math.min(now, entry.created.getTime());
      this.#liveness.observe(edge, entry.operation === 'PUT' ? at : undefined);
      return;
    }
    const count = entry.operation === 'PUT' ? Number(entry.string()) : 0;
    let edges = this.#remote.get(pool);
    if (!Number.isInteger(count) || count <= 0) {
      edges?.delete(edge);
      if (edges?.size === 0) this.#remote.delete(pool);
      return;
    }
    // Values replayed when the watch starts were written earlier: age them from their write
    // (server clock, never in the future); updates count from when they arrive, so a skewed
    // server clock cannot age live counts out.
    const seenAt = live ? now : Math.min(now, entry.created.getTime());
    if (!edges) {
      edges = new Map();
      this.#remote.set(pool, edges);
    }
    edges.set(edge, { count, seenAt });
  }

  #warnOnce(err: unknown, msg: string): void {
    if (this.#warned) return;
    this.#warned = true;
    this.#opts.logger.warn({ err: String(err) }, msg);
  }
}

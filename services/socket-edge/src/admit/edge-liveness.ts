import type { KV } from 'nats';

/** The pool token of liveness keys in the connections bucket: `_alive.<edgeId>`. No account id starts with `_`. */
export const ALIVE_POOL = '_alive';

export interface EdgeLivenessOptions {
  edgeId: string;
  /** How often this edge says it is alive, ms. */
  intervalMs: number;
  /** An edge not heard from for this long is dead: its counts stop counting, ms. */
  timeoutMs: number;
  now: () => number;
}

/**
 * Which edges are alive, from the heartbeats each writes to the connections bucket. A crashed edge
 * cannot delete its counts, and they used to count until the bucket's TTL (30 s) aged them out,
 * locking a capped account out for that long (issue 10, finding D). Refreshing every count that
 * often would cost a KV write per account per edge per interval; one heartbeat key per edge costs
 * one write per interval, and lets every other edge ignore a dead edge's counts within
 * `timeoutMs` (1.5 s by default). An edge never heard from (an older release that writes no
 * heartbeat) is judged by its counts' own age, as before.
 */
export class EdgeLiveness {
  readonly #opts: EdgeLivenessOptions;
  readonly #lastSeen = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;

  constructor(opts: EdgeLivenessOptions) {
    this.#opts = opts;
  }

  /** Starts writing this edge's heartbeat. */
  start(kv: KV, onError: (err: unknown) => void): void {
    const beat = () => kv.put(this.#key(), String(this.#opts.now())).catch(onError);
    void beat();
    this.#timer = setInterval(() => void beat(), this.#opts.intervalMs);
    this.#timer.unref();
  }

  /** Stops the heartbeat and deletes it, so other edges forget this one at once. */
  async stop(kv: KV | undefined): Promise<void> {
    clearInterval(this.#timer);
    await kv?.delete(this.#key()).catch(() => undefined);
  }

  /** Another edge's heartbeat was seen at `at` (epoch ms, local clock), or deleted (`undefined`). */
  observe(edge: string, at: number | undefined): void {
    if (at === undefined) this.#lastSeen.set(edge, Number.NEGATIVE_INFINITY);
    else this.#lastSeen.set(edge, Math.max(at, this.#lastSeen.get(edge) ?? at));
  }

  /** false once `edge` missed its heartbeats (or said goodbye); undefined for an edge never heard from. */
  alive(edge: string): boolean | undefined {
    const seen = this.#lastSeen.get(edge);
    if (seen === undefined) return undefined;
    return this.#opts.now() - seen <= this.#opts.timeoutMs;
  }

  /** How many other edges are alive now (heard from within `timeoutMs`). */
  othersAlive(): number {
    const now = this.#opts.now();
    let alive = 0;
    for (const seen of this.#lastSeen.values()) if (now - seen <= this.#opts.timeoutMs) alive++;
    return alive;
  }

  #key(): string {
    return `${ALIVE_POOL}.${this.#opts.edgeId}`;
  }
}

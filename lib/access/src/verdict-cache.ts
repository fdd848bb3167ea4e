import type { HeraldError } from '@herald/proto';

/** What auth said about a credential: the value it verified, or its refusal. */
export type Verdict<T> = { ok: true; value: T } | { ok: false; error: HeraldError };

export interface VerdictCacheOptions {
  /** How long a verified value is reused, ms. */
  ttlMs: number;
  /** Most cached values; the oldest is evicted first. */
  maxEntries: number;
  /** How long a refusal is reused, ms. */
  negativeTtlMs: number;
  /** Most cached refusals, kept apart so a flood of bad credentials cannot evict the good ones. */
  maxNegativeEntries: number;
}

interface Entry<T> {
  verdict: Verdict<T>;
  until: number;
  /** From then on (a verified value), a use of the entry asks again in the background. */
  refreshAt: number;
}

/** Share of the TTL after which a verified value is refreshed ahead of its expiry. */
const REFRESH_AHEAD = 0.75;

/**
 * The cache of auth's verdicts on credentials, shared by the key verifier (`rt.auth.verify`) and
 * the Pusher app lookup (`rt.auth.pusher`): a verified value is reused for the TTL and asked for
 * again in the background after three quarters of it (so a busy credential never waits for auth
 * at its expiry), a refusal for the negative TTL in a map of its own; one question per credential
 * in flight; an answer that `ask` marks not to cache (auth did not answer) is never kept; and an
 * answer asked for before a {@link forget} is not cached after it.
 */
export class VerdictCache<T> {
  readonly #ask: (id: string) => Promise<{ verdict: Verdict<T>; cache: boolean }>;
  readonly #opts: VerdictCacheOptions;
  readonly #found = new Map<string, Entry<T>>();
  readonly #refused = new Map<string, Entry<T>>();
  readonly #inflight = new Map<string, Promise<Verdict<T>>>();
  /** Counts forgets, so an answer asked for before one is not cached after it. */
  #generation = 0;

  /** @param ask asks auth about a credential (by the id it is cached under) */
  constructor(
    ask: (id: string) => Promise<{ verdict: Verdict<T>; cache: boolean }>,
    opts: VerdictCacheOptions,
  ) {
    this.#ask = ask;
    this.#opts = opts;
  }

  /** The verified value, or rejects with the refusal (or the outage `ask` reported). */
  async get(id: string): Promise<T> {
    const now = Date.now();
    const cached = this.#found.get(id) ?? this.#refused.get(id);
    let verdict: Verdict<T>;
    if (cached && cached.until > now) {
      verdict = cached.verdict;
      if (now >= cached.refreshAt && !this.#inflight.has(id)) this.#refresh(id);
    } else {
      verdict = await (this.#inflight.get(id) ?? this.#refresh(id));
    }
    if (verdict.ok) return verdict.value;
    throw verdict.error;
  }

  /**
   * Drops the verified values `found` matches and the refusals `refused` matches (none without
   * it); an answer in flight now is not cached when it comes.
   */
  forget(found: (value: T) => boolean, refused?: (error: HeraldError) => boolean): void {
    this.#generation++;
    for (const [id, { verdict }] of this.#found) {
      if (verdict.ok && found(verdict.value)) this.#found.delete(id);
    }
    if (!refused) return;
    for (const [id, { verdict }] of this.#refused) {
      if (!verdict.ok && refused(verdict.error)) this.#refused.delete(id);
    }
  }

  /** Cached verdicts, values and refusals. */
  get size(): number {
    return this.#found.size + this.#refused.size;
  }

  clear(): void {
    this.#found.clear();
    this.#refused.clear();
  }

  #refresh(id: string): Promise<Verdict<T>> {
    const pending = this.#answer(id).finally(() => this.#inflight.delete(id));
    this.#inflight.set(id, pending);
    return pending;
  }

  async #answer(id: string): Promise<Verdict<T>> {
    const generation = this.#generation;
    const { verdict, cache } = await this.#ask(id);
    if (cache && generation === this.#generation) this.#remember(id, verdict);
    return verdict;
  }

  #remember(id: string, verdict: Verdict<T>): void {
    const [cache, ttlMs, max] = verdict.ok
      ? [this.#found, this.#opts.ttlMs, this.#opts.maxEntries]
      : [this.#refused, this.#opts.negativeTtlMs, this.#opts.maxNegativeEntries];
    this.#found.delete(id);
    this.#refused.delete(id);
    const now = Date.now();
    cache.set(id, {
      verdict,
      until: now + ttlMs,
      refreshAt: verdict.ok ? now + ttlMs * REFRESH_AHEAD : Number.POSITIVE_INFINITY,
    });
    while (cache.size > max) {
      const oldest = cache.keys().next().value;
      if (oldest === undefined) break;
      cache.delete(oldest);
    }
  }
}

import type { HeraldError } from '@herald/proto';

/** What auth answered about one credential: its value, or its refusal. */
export type Answer<V> = { ok: true; value: V } | { ok: false; error: HeraldError };

export interface AnswerCacheOptions {
  /** How long a successful answer is reused, ms. */
  ttlMs: number;
  /** Most cached successes; the oldest is evicted first. */
  maxEntries: number;
  /** How long a refusal is reused, ms. */
  negativeTtlMs: number;
  /** Most cached refusals, kept apart so a flood of bad credentials cannot evict good ones. */
  maxNegativeEntries: number;
}

interface Entry<V> {
  answer: Answer<V>;
  until: number;
  /** From then on (a success), a use of the entry asks auth again in the background. */
  refreshAt: number;
}

/** Share of the TTL after which a success is refreshed ahead of its expiry. */
const REFRESH_AHEAD = 0.75;

/**
 * Auth's answers about credentials, cached briefly (the `KeyVerifier`'s keys, the
 * `PusherAppVerifier`'s apps): one question in flight per credential, successes refreshed ahead of
 * their expiry so a busy credential never stalls every TTL, refusals cached apart, and an answer
 * asked for before an invalidation never cached after it. `ask` resolves with auth's answer, or
 * with a refusal that is not to be cached (`{ ok: false }` plus `cache: false`: auth unavailable);
 * it never rejects.
 */
export class AnswerCache<V> {
  readonly #ask: (id: string) => Promise<Answer<V> & { cache?: false }>;
  readonly #opts: AnswerCacheOptions;
  readonly #cache = new Map<string, Entry<V>>();
  readonly #negative = new Map<string, Entry<V>>();
  readonly #inflight = new Map<string, Promise<Answer<V>>>();
  /** Counts invalidations, so an answer asked for before one is not cached after it. */
  #generation = 0;

  constructor(
    ask: (id: string) => Promise<Answer<V> & { cache?: false }>,
    opts: AnswerCacheOptions,
  ) {
    this.#ask = ask;
    this.#opts = opts;
  }

  /**
   * The cached answer when it has not expired (starting its refresh ahead, as `get` does), with
   * no promise; undefined when `get` would ask.
   */
  peek(id: string): Answer<V> | undefined {
    const now = Date.now();
    const cached = this.#cache.get(id) ?? this.#negative.get(id);
    if (!cached || cached.until <= now) return undefined;
    if (now >= cached.refreshAt && !this.#inflight.has(id))
      this.#refresh(id).catch(() => undefined);
    return cached.answer;
  }

  /** The cached answer about `id`, or auth's (one question shared by every caller meanwhile). */
  async get(id: string): Promise<Answer<V>> {
    const now = Date.now();
    const cached = this.#cache.get(id) ?? this.#negative.get(id);
    if (cached && cached.until > now) {
      // Asked again before it expires; meanwhile the answer, not older than the TTL, holds.
      if (now >= cached.refreshAt && !this.#inflight.has(id))
        this.#refresh(id).catch(() => undefined);
      return cached.answer;
    }
    return this.#inflight.get(id) ?? this.#refresh(id);
  }

  /**
   * Drops the successes whose value `dropValue` names and the refusals `dropRefusal` names; an
   * answer in flight is not cached.
   */
  invalidate(
    dropValue: (value: V) => boolean,
    dropRefusal?: (error: HeraldError) => boolean,
  ): void {
    this.#generation++;
    for (const [id, { answer }] of this.#cache) {
      if (answer.ok && dropValue(answer.value)) this.#cache.delete(id);
    }
    if (!dropRefusal) return;
    for (const [id, { answer }] of this.#negative) {
      if (!answer.ok && dropRefusal(answer.error)) this.#negative.delete(id);
    }
  }

  /** Cached answers, successes and refusals. */
  get size(): number {
    return this.#cache.size + this.#negative.size;
  }

  clear(): void {
    this.#cache.clear();
    this.#negative.clear();
  }

  #refresh(id: string): Promise<Answer<V>> {
    const generation = this.#generation;
    const pending = this.#ask(id)
      .then((answer) => {
        if (answer.cache !== false && generation === this.#generation) this.#remember(id, answer);
        return answer;
      })
      .finally(() => this.#inflight.delete(id));
    this.#inflight.set(id, pending);
    return pending;
  }

  #remember(id: string, answer: Answer<V>): void {
    const o = this.#opts;
    const [cache, ttlMs, max] = answer.ok
      ? [this.#cache, o.ttlMs, o.maxEntries]
      : [this.#negative, o.negativeTtlMs, o.maxNegativeEntries];
    this.#cache.delete(id);
    this.#negative.delete(id);
    const now = Date.now();
    cache.set(id, {
      answer,
      until: now + ttlMs,
      refreshAt: answer.ok ? now + ttlMs * REFRESH_AHEAD : Number.POSITIVE_INFINITY,
    });
    while (cache.size > max) {
      const oldest = cache.keys().next().value;
      if (oldest === undefined) break;
      cache.delete(oldest);
    }
  }
}

import { refillBucket, secondsUntilToken } from '@herald/kit';
import { HeraldError } from '@herald/proto';

export interface ConnectRateSettings {
  /** Upgrade attempts per second one address may sustain; 0 turns the limit off. */
  perSecond: number;
  /** Attempts an address may make at once before the rate applies. */
  burst: number;
  /** Most addresses tracked at once; the one seen longest ago is forgotten first. */
  maxSources: number;
}

interface Bucket {
  tokens: number;
  at: number;
  /** Refused since its last admitted attempt: it has had its 429 and Retry-After. */
  told: boolean;
}

/**
 * A token bucket per client address over every WebSocket upgrade attempt, good or bad, checked
 * before any key lookup: an address that floods the edge with connects (bad keys or tokens
 * included) is refused 429 `too_many_connects` at the cost of a map lookup, so it neither costs
 * auth round trips nor delays other addresses' connects. Memory is bounded by `maxSources`
 * buckets: past it the address seen longest ago is forgotten, and comes back
 * with a full bucket (an attacker with more addresses than that is the proxy's or firewall's).
 */
export class ConnectRateLimiter {
  readonly #settings: ConnectRateSettings;
  readonly #now: () => number;
  /** In order of last attempt (a touched bucket moves to the end): the first is evicted first. */
  readonly #buckets = new Map<string, Bucket>();

  constructor(settings: ConnectRateSettings, now: () => number = Date.now) {
    this.#settings = settings;
    this.#now = now;
  }

  /** Takes one attempt of `source`, or throws the 429 (Retry-After: when the next one is due). */
  take(source: string): void {
    const { perSecond, burst, maxSources } = this.#settings;
    if (perSecond === 0) return;
    const now = this.#now();
    const bucket = this.#buckets.get(source);
    const { tokens } = refillBucket(bucket, this.#settings, now);
    this.#buckets.delete(source);
    if (tokens < 1) {
      this.#buckets.set(source, { tokens, at: now, told: true });
      const retryAfter = secondsUntilToken(tokens, perSecond);
      throw new HeraldError(
        'too_many_connects',
        `Too many connects from this address (more than ${burst} at once, then ${perSecond} per second): retry after Retry-After, with backoff`,
        { retryAfter },
      );
    }
    this.#buckets.set(source, { tokens: tokens - 1, at: now, told: false });
    while (this.#buckets.size > maxSources) {
      const oldest = this.#buckets.keys().next().value;
      if (oldest === undefined) break;
      this.#buckets.delete(oldest);
    }
  }

  /**
   * True when `source` was already refused and its bucket is still empty: its new connections
   * can be dropped at accept, before a TLS handshake costs anything (it has had its 429 with
   * Retry-After on the connect that crossed the limit). Spends nothing.
   */
  dropsEarly(source: string): boolean {
    const { perSecond } = this.#settings;
    const bucket = this.#buckets.get(source);
    if (perSecond === 0 || !bucket?.told) return false;
    return refillBucket(bucket, this.#settings, this.#now()).tokens < 1;
  }

  /** Addresses tracked now (at most maxSources). */
  get size(): number {
    return this.#buckets.size;
  }
}

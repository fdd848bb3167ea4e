import type { Logger } from '@herald/kit';
import type { HeraldError, VerifiedKey } from '@herald/proto';
import type { KV } from 'nats';
import { LocalRate, rateLimited } from './local-rate.js';
import { type Lease, newLease, promoteNext, type Renewal, resizeLease } from './rate-lease.js';
import { takeShared } from './shared-rate.js';
import { maxLease } from './token-bucket.js';

/** The KV bucket holding every key's shared token bucket, keyed by key id. */
export const RATE_BUCKET = 'herald_dispatch_rate';

/**
 * Renewals in a row that leased nothing (every compare-and-set lost to other instances) before
 * the dispatches waiting for a token are refused with Retry-After 1 s.
 */
const STALLED_RENEWALS = 8;
/** After the shared state failed to answer, how long to count locally before asking it again, ms. */
const FALLBACK_MS = 5000;
/** Most keys whose lease one instance remembers; the least recently used is forgotten first. */
const MAX_KEYS = 50_000;

export interface RateLimiterOptions {
  /** How long leased tokens stay usable; unused ones are forfeited, ms. */
  leaseMs: number;
  /** A lease takes at most this many ms worth of the key's dispatch_rate (at least 1 token). */
  leaseBatchMs: number;
  logger: Logger;
  /** Epoch ms; injectable for tests. */
  now?: () => number;
}

/**
 * The per-key dispatch rate limit, across every ingress instance: one token bucket per key
 * (refill `dispatch_rate` per second, capacity `dispatch_burst`, from the key's plan) kept in the
 * NATS KV bucket `herald_dispatch_rate`. An instance leases a small batch of tokens at a time with
 * compare-and-set on the key's entry, so the shared state is touched once per batch, not per
 * dispatch, and tokens are never handed out twice. Leased tokens expire after `leaseMs`; a
 * refused dispatch is answered locally until the bucket holds a token again.
 *
 * The next lease is taken ahead, in the background, once half of the current one is spent or
 * it has a quarter of `leaseMs` left, so no dispatch waits for the shared state's two KV round
 * trips while the key is busy. Dispatches that find
 * the lease spent anyway (a burst arriving at once) queue, first come first served, behind the
 * one renewal in flight; a renewal takes a token for each of them on top of the lease, as many
 * as the shared bucket holds, and hands them out as soon as it lands, and renewals go on while
 * dispatches wait and the bucket has tokens. So a burst is accepted up to what the shared bucket
 * holds, whatever the lease size, and a dispatch is refused only when the bucket has no whole
 * token, with Retry-After the wait for the next one. The waiters' tokens are spent the moment
 * they are leased, so an instance still holds at most its lease and the one renewed ahead of it:
 * `maxLease + floor(maxLease / 2)` tokens (`maxHeld`). Accepted dispatches of a key over
 * any window of T seconds stay within `burst + rate × T + instances × maxHeld` (tokens leased
 * before the window): see docs/operations.md, "Caps and rate limits across instances". While the KV does not answer,
 * each instance enforces the limit on its own (so the global rate is at most instances × the
 * limit) rather than refuse every dispatch or let them all through.
 */
export class DispatchRateLimiter {
  readonly #kv: () => Promise<KV>;
  readonly #opts: RateLimiterOptions;
  readonly #now: () => number;
  readonly #leases = new Map<string, Lease>();
  /** The per-instance limit while the shared state does not answer. */
  readonly #local = new LocalRate(MAX_KEYS);
  #fallbackUntil = 0;

  constructor(kv: () => Promise<KV>, opts: RateLimiterOptions) {
    this.#kv = kv;
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
  }

  /**
   * Spends one of the key's tokens at once when this instance's lease holds one (true), with no
   * promise; false leaves the decision to {@link take}. The busy key's common case: a dispatch,
   * and every event of a batch, spends a leased token without a microtask turn.
   */
  takeNow(key: VerifiedKey): boolean {
    const lease = this.#leaseOf(key.id);
    // Dispatches already waiting go first: a newcomer queues behind them.
    if (lease.waiters.length !== 0) return false;
    const now = this.#now();
    if (lease.tokens <= 0 || now >= lease.expiresAt) promoteNext(lease, now);
    if (lease.tokens <= 0 || now >= lease.expiresAt) return false;
    lease.tokens--;
    this.#renewAhead(key, lease, now);
    return true;
  }

  /** Spends one of the key's tokens, or throws 403 `rate_limited` with its Retry-After. */
  async take(key: VerifiedKey): Promise<void> {
    if (this.takeNow(key)) return;
    const lease = this.#leaseOf(key.id);
    // Dispatches already waiting go first: a newcomer queues behind them.
    if (lease.waiters.length === 0) {
      const now = this.#now();
      if (now < lease.emptyUntil) throw rateLimited(key, lease.emptyUntil - now);
      if (now < this.#fallbackUntil) return this.#local.take(key, now);
    }
    return new Promise<void>((resolve, reject) => {
      lease.waiters.push({ resolve, reject });
      // A renewal ahead already in flight serves the queue too when it lands.
      lease.pending ??= this.#renew(key, lease, 'due');
    });
  }

  /** Resolves once no lease renewal is in flight (tests read the shared state after it). */
  async settled(): Promise<void> {
    for (;;) {
      const pending = [...this.#leases.values()].flatMap((l) => (l.pending ? [l.pending] : []));
      if (pending.length === 0) return;
      await Promise.all(pending);
    }
  }

  /**
   * Starts renewing in the background, while the lease still has tokens, once half of it is
   * spent (the next one doubles) or a quarter of its life is left (the next one halves if more
   * than half is unspent): the renewal lands before the lease runs out, so no dispatch waits.
   */
  #renewAhead(key: VerifiedKey, lease: Lease, now: number): void {
    if (lease.pending || lease.next || now < lease.emptyUntil || now < this.#fallbackUntil) return;
    const halfSpent = lease.tokens <= lease.size / 2;
    if (!halfSpent && lease.expiresAt - now > this.#opts.leaseMs / 4) return;
    lease.pending = this.#renew(key, lease, halfSpent ? 'grow' : 'shrink');
  }

  #leaseOf(keyId: string): Lease {
    let lease = this.#leases.get(keyId);
    if (lease) this.#leases.delete(keyId);
    else lease = newLease();
    this.#leases.set(keyId, lease);
    if (this.#leases.size > MAX_KEYS) {
      const oldest = this.#leases.keys().next().value;
      if (oldest !== undefined) this.#leases.delete(oldest);
    }
    return lease;
  }

  /**
   * Leases tokens from the key's shared bucket into `lease.next`, or learns when it will hold one
   * again, then serves the dispatches waiting. `due`: the lease ran out or expired (dispatches
   * wait); `grow`/`shrink`: renewed ahead with half of it spent, or with its life nearly over and
   * more than half unspent. Never rejects.
   */
  #renew(key: VerifiedKey, lease: Lease, why: Renewal): Promise<void> {
    return this.#lease(key, lease, why).finally(() => {
      lease.pending = undefined;
      this.#serve(key, lease);
    });
  }

  /**
   * Hands the leased tokens to the waiting dispatches in arrival order. Those left over are
   * refused when the shared bucket has no whole token (Retry-After: until it has one), counted
   * locally while the shared state does not answer, and otherwise wait for another renewal.
   */
  #serve(key: VerifiedKey, lease: Lease): void {
    const waiters = lease.waiters;
    if (waiters.length === 0) return;
    const now = this.#now();
    let served = 0;
    while (served < waiters.length) {
      if (lease.tokens <= 0 || now >= lease.expiresAt) promoteNext(lease, now);
      if (lease.tokens <= 0 || now >= lease.expiresAt) break;
      const n = Math.min(lease.tokens, waiters.length - served);
      lease.tokens -= n;
      served += n;
    }
    const granted = waiters.splice(0, served);
    for (const w of granted) w.resolve();
    if (waiters.length === 0) {
      lease.stalled = 0;
      this.#renewAhead(key, lease, now);
      return;
    }
    lease.stalled = served > 0 ? 0 : lease.stalled + 1;
    if (now < lease.emptyUntil) {
      this.#refuseWaiting(lease, rateLimited(key, lease.emptyUntil - now));
    } else if (now < this.#fallbackUntil) {
      for (const w of waiters.splice(0)) {
        try {
          this.#local.take(key, now);
          w.resolve();
        } catch (err) {
          w.reject(err);
        }
      }
    } else if (lease.stalled >= STALLED_RENEWALS) {
      // Other instances won every compare-and-set for a while: the bucket had tokens, but none
      // could be leased. Try again shortly.
      this.#refuseWaiting(lease, rateLimited(key, 1000));
    } else {
      lease.pending = this.#renew(key, lease, 'due');
    }
  }

  #refuseWaiting(lease: Lease, err: HeraldError): void {
    lease.stalled = 0;
    for (const w of lease.waiters.splice(0)) w.reject(err);
  }

  async #lease(key: VerifiedKey, lease: Lease, why: Renewal): Promise<void> {
    const limits = key.limits;
    resizeLease(lease, why, maxLease(limits, this.#opts.leaseBatchMs));
    try {
      const kv = await this.#kv();
      // A token for each dispatch waiting, on top of the lease: they spend theirs on arrival.
      const wanted = () => lease.waiters.length + lease.size;
      const took = await takeShared(kv, key.id, limits, wanted, this.#now);
      if (took.kind === 'empty') lease.emptyUntil = took.until;
      if (took.kind === 'taken') {
        lease.next = { tokens: took.tokens, expiresAt: this.#now() + this.#opts.leaseMs };
        lease.emptyUntil = took.emptyUntil;
      }
    } catch (err) {
      this.#fallbackUntil = this.#now() + FALLBACK_MS;
      this.#opts.logger.warn(
        { err: String(err) },
        'dispatch rate state unavailable: limiting on this instance alone for a while',
      );
    }
  }
}

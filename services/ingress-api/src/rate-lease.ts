/** What one instance holds of a key's shared token bucket (rate-limiter.ts). */
export interface Lease {
  /** Tokens this instance may spend without asking the shared bucket. */
  tokens: number;
  expiresAt: number;
  /** Tokens the next lease asks for: doubles while leases run out, halves when they expire unused. */
  size: number;
  /** The shared bucket had no whole token: refuse locally until then. */
  emptyUntil: number;
  /** The lease renewed ahead of this one, spent once this one is used up or expired. */
  next: { tokens: number; expiresAt: number } | undefined;
  /** The renewal in flight (at most one per key), which serves `waiters` when it lands. */
  pending: Promise<void> | undefined;
  /** Dispatches that found the lease spent, first come first served. */
  waiters: Waiter[];
  /** Renewals in a row that ended with waiters left and nothing leased (CAS lost throughout). */
  stalled: number;
}

export interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Why a lease is renewed. `due`: it ran out or expired (dispatches wait); `grow`/`shrink`:
 * renewed ahead with half of it spent, or with its life nearly over and more than half unspent.
 */
export type Renewal = 'due' | 'grow' | 'shrink';

/** A key's lease before its first renewal: nothing held, nothing known. */
export function newLease(): Lease {
  return {
    tokens: 0,
    expiresAt: 0,
    size: 1,
    emptyUntil: 0,
    next: undefined,
    pending: undefined,
    waiters: [],
    stalled: 0,
  };
}

/**
 * Sizes the next lease, at most `max` tokens: it doubles after a lease that was used up, halves
 * after one that expired with tokens left. A due renewal replaces a lease that is used up or
 * expired: what is left of it is forfeited.
 */
export function resizeLease(lease: Lease, why: Renewal, max: number): void {
  if (lease.expiresAt > 0) {
    const wasted = why === 'shrink' || (why === 'due' && lease.tokens > 0);
    lease.size = wasted ? Math.max(1, Math.floor(lease.size / 2)) : Math.min(max, lease.size * 2);
  }
  lease.size = Math.min(lease.size, max);
  if (why === 'due') lease.tokens = 0;
}

/**
 * Makes the lease renewed ahead the current one once the current one is used up or expired:
 * what is left of the current one is forfeited, as when it expires.
 */
export function promoteNext(lease: Lease, now: number): void {
  const next = lease.next;
  if (!next) return;
  lease.next = undefined;
  if (now >= next.expiresAt) return;
  lease.tokens = next.tokens;
  lease.expiresAt = next.expiresAt;
}

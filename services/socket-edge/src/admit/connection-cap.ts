import { HeraldError, type VerifiedKey } from '@herald/proto';
import type { ConnectionCounts } from './connection-counts.js';
import type { ConnectionGate } from './connection-gate.js';

/**
 * The pool a key's sockets count in. A Live key's sockets count against the account's plan cap;
 * the Test key's in a pool of their own with the catalogue's `test_key_limits` cap, so trying
 * things with the Test key never eats into production's connections, nor the reverse. The
 * dashboard's own sockets (a `dashboard` credential, one per open dashboard tab) count in a third
 * pool capped by auth's DASHBOARD_MAX_CONNECTIONS, so opening the dashboard never takes a
 * connection the customer pays for.
 */
export function poolOf(key: Pick<VerifiedKey, 'account_id' | 'kind'>): string {
  if (key.kind === 'live') return key.account_id;
  return `${key.account_id}.${key.kind}`;
}

function capText(key: VerifiedKey, cap: number): { whose: string; fix: string } {
  if (key.kind === 'test') {
    return {
      whose: `The Test key of this account may hold ${cap} concurrent connections`,
      fix: ', or use a Live key',
    };
  }
  if (key.kind === 'dashboard') {
    return {
      whose: `This account's dashboard may hold ${cap} live connections (DASHBOARD_MAX_CONNECTIONS)`,
      fix: ': close a dashboard tab (the others fall back to polling)',
    };
  }
  return {
    whose: `This account's ${key.plan} plan allows ${cap} concurrent connections`,
    fix: ', or move to a bigger plan',
  };
}

/**
 * The per-account concurrent-connection cap, across every edge: admits a socket when the sockets
 * counted in its pool on every edge (see {@link ConnectionCounts}) are fewer than the key's
 * `limits.connections`, counting it at once (before its upgrade completes) so a burst on this edge
 * cannot overshoot. Edges learn of each other's counts within one KV propagation delay, so a
 * burst spread over several edges can exceed the cap by about the connects the other edges admit
 * within that delay (docs/operations.md, "Caps and rate limits across instances").
 */
export class ConnectionCap implements ConnectionGate {
  readonly #counts: ConnectionCounts;

  constructor(counts: ConnectionCounts) {
    this.#counts = counts;
  }

  admit(key: VerifiedKey): void {
    const pool = poolOf(key);
    const cap = key.limits.connections;
    const open = this.#counts.total(pool);
    if (open >= cap) {
      const { whose, fix } = capText(key, cap);
      throw new HeraldError(
        'connection_limit',
        `${whose} and ${open} are open: close a socket first${fix}`,
        { field: 'api_key' },
      );
    }
    this.#counts.add(pool, 1);
  }

  release(key: VerifiedKey): void {
    this.#counts.add(poolOf(key), -1);
  }
}

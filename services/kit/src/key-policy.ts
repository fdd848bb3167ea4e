import { type Client, HeraldError, type VerifiedKey } from '@herald/proto';

export interface KeyUse {
  /** The `client` the caller claims (body field or query parameter). */
  client: Client;
  /** The request's Origin header, if any. */
  origin: string | undefined;
  /** Now, epoch ms (injectable for tests). */
  now: number;
}

/**
 * Checks that a verified key may be used this way: not expired, its plan not lapsed (Live keys),
 * same client type, and for a web key an Origin equal to its registered domain. Shared by ingress
 * (HTTP and NATS) and the edge so every entry point applies the same rules; re-checking expiry
 * and plan end here means a cached verification never outlives either. Throws the
 * {@link HeraldError} to return.
 */
export function authorizeKeyUse(key: VerifiedKey, use: KeyUse): void {
  if (key.expires_at !== null && use.now >= key.expires_at) {
    throw new HeraldError(
      'key_expired',
      `api_key expired at ${new Date(key.expires_at).toISOString()}: create a new key`,
      { field: 'api_key' },
    );
  }
  const lapsesAt = planLapse(key);
  if (lapsesAt !== null && use.now >= lapsesAt) {
    throw new HeraldError(
      'plan_inactive',
      `The account's ${key.plan} plan lapsed at ${new Date(lapsesAt).toISOString()}, so its Live keys are refused: renew the subscription (support: account set-plan --account ID --plan ${key.plan} --until DATE), then retry`,
      { field: 'api_key' },
    );
  }
  if (key.client !== use.client) {
    throw new HeraldError(
      'client_mismatch',
      `client is "${use.client}" but this api_key was issued for "${key.client}": send client "${key.client}" or use a ${use.client} key`,
      { field: 'client' },
    );
  }
  if (key.client === 'web' && key.domain !== null) checkOrigin(key, key.domain, use.origin);
}

/**
 * When a key in use stops being usable on its own (no broadcast needed): its expiry, or for a
 * Live key the end of its account's paid period, whichever comes first. Null: never.
 */
export function keyUseDeadline(key: VerifiedKey): number | null {
  const lapsesAt = planLapse(key);
  if (key.expires_at === null) return lapsesAt;
  if (lapsesAt === null) return key.expires_at;
  return Math.min(key.expires_at, lapsesAt);
}

/** A Test key lives by its own 4-hour expiry whatever the plan; only Live keys follow the plan. */
function planLapse(key: VerifiedKey): number | null {
  return key.kind === 'live' ? key.plan_until : null;
}

function checkOrigin(key: VerifiedKey, domain: string, origin: string | undefined): void {
  if (origin === undefined || origin === '') {
    throw new HeraldError(
      'origin_mismatch',
      `Origin header is required for a web key: send Origin ${domain}, or use a mobile key from servers`,
      { field: 'Origin' },
    );
  }
  // Auth stores the domain as the exact origin browsers send (scheme and host lower-cased, default
  // port dropped), so one whole-string comparison refuses other schemes, ports and suffix tricks.
  if (origin.toLowerCase() !== domain.toLowerCase()) {
    throw new HeraldError(
      'origin_mismatch',
      `Origin does not match the key's registered domain: requests must come from ${domain}`,
      { field: 'Origin' },
    );
  }
  // Auth registers plain http only for test keys (http://localhost); refuse it for any other key
  // should one ever reach here, rather than trust every producer of VerifiedKey.
  if (key.kind !== 'test' && !domain.toLowerCase().startsWith('https://')) {
    throw new HeraldError(
      'origin_mismatch',
      `Only Test keys may be used from ${domain}: register an https:// domain for this key`,
      { field: 'Origin' },
    );
  }
}

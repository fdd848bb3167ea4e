import { type Client, HeraldError, isDashboardRecipient, type VerifiedKey } from '@herald/proto';

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

/** How a credential reaches Herald: a socket connect, `POST /notify`, or a NATS dispatch. */
export type KeyEntry = 'socket' | 'http' | 'nats';

/**
 * Checks who a verified credential may address. A `dashboard` credential opens only its account's
 * dashboard recipient (role `listen`, over a socket) or dispatches only to it (role `send`, over
 * NATS, which only services reach): never `POST /notify`, never another recipient. A customer's
 * key may not use the dashboard recipient, so nothing but auth's notices reaches the dashboard and
 * a customer socket cannot take them. Throws the {@link HeraldError} to return (403).
 */
export function authorizeRecipient(key: VerifiedKey, recipient: string, entry: KeyEntry): void {
  const reserved = isDashboardRecipient(key.account_id, recipient);
  if (key.kind !== 'dashboard') {
    if (reserved) {
      throw new HeraldError(
        'reserved_recipient',
        `recipient ${recipient} is this account's dashboard recipient, which only the dashboard uses: pick another recipient id`,
        { field: 'recipient' },
      );
    }
    return;
  }
  const scope = key.dashboard;
  const role = entry === 'socket' ? 'listen' : 'send';
  if (entry === 'http' || scope === undefined || scope.role !== role) {
    throw new HeraldError(
      'dashboard_key_scope',
      entry === 'socket'
        ? 'api_key is a dashboard credential that cannot open sockets: use a key of the account'
        : 'api_key is a dashboard credential, which only receives the account dashboard notices: send with a Live or Test key',
      { field: 'api_key' },
    );
  }
  if (!reserved || recipient.toLowerCase() !== scope.recipient) {
    throw new HeraldError(
      'dashboard_key_scope',
      `api_key is a dashboard credential: it may only be used with recipient ${scope.recipient}`,
      { field: 'recipient' },
    );
  }
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

const LOCALHOST_HTTP = /^http:\/\/localhost(?::\d+)?$/i;

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
  // Auth registers plain http only for test keys (http://localhost), and binds a dashboard
  // credential to http://localhost only when ACCOUNT_API_ORIGIN is a local dev server (the one
  // http origin the account API admits); refuse it for any other key should one ever reach here,
  // rather than trust every producer of VerifiedKey.
  const localDashboard = key.kind === 'dashboard' && LOCALHOST_HTTP.test(domain);
  if (key.kind !== 'test' && !localDashboard && !domain.toLowerCase().startsWith('https://')) {
    throw new HeraldError(
      'origin_mismatch',
      `Only Test keys may be used from ${domain}: register an https:// domain for this key`,
      { field: 'Origin' },
    );
  }
}

/** What a use of a key needs its scope to allow: opening a socket, or sending events. */
export type ScopeUse = 'subscribe' | 'dispatch';

/**
 * Checks that the key's scope allows this use: a `subscribe` key (browsers and apps) never
 * dispatches, on any transport; a `dispatch` key (servers) never opens a socket. A key without a
 * scope (made before scopes) is `both`. Throws 403 `scope_denied` naming `api_key`.
 */
export function authorizeScope(key: VerifiedKey, use: ScopeUse): void {
  const scope = key.scope ?? 'both';
  if (scope === 'both' || scope === use) return;
  throw new HeraldError(
    'scope_denied',
    use === 'dispatch'
      ? 'api_key is a subscribe key: it opens sockets and cannot send events; send from your server with a key of scope dispatch (or both)'
      : 'api_key is a dispatch key, for servers: it cannot open sockets; connect with a key of scope subscribe (or both)',
    { field: 'api_key' },
  );
}

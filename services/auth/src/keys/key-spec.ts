import { randomBytes } from 'node:crypto';
import {
  Client,
  HeraldError,
  INBOX_MAX_DAYS,
  INBOX_MIN_DAYS,
  InboxDays,
  KeyKind,
  KeyPrefix,
  KeyScope,
  SIGNING_SECRET_PREFIX,
} from '@herald/proto';
import { normalizeDomain } from './domain.js';
import { resolveKeyName } from './key-name.js';
import { type PushColumns, type PushRequestFields, resolveKeyPush } from './push-settings.js';
import { resolveTokenRule } from './token-rule.js';

/** Random bytes behind every key: 256 bits, far past any brute force. */
export const KEY_RANDOM_BYTES = 32;
/** 62^43 > 2^256, so 43 base62 digits hold 32 bytes; keys are zero-padded to this length. */
export const KEY_BODY_LENGTH = 43;
/** `hk_live_` / `hk_test_` plus the body. */
export const KEY_LENGTH = KeyPrefix.live.length + KEY_BODY_LENGTH;
/** How much of a key is kept in clear (`hk_test_Ab3x`), so users can tell keys apart in lists. */
export const KEY_PREFIX_LENGTH = 12;
/** Test keys are valid this long after creation (DESIGN.md: 4 hours). */
export const TEST_KEY_TTL_MS = 4 * 60 * 60 * 1000;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * A new API key: the kind's prefix, so secret scanners can spot a leaked key, then 32 random bytes
 * in base62 (letters and digits only, so a double-click selects the whole key).
 */
export function generateApiKey(kind: keyof typeof KeyPrefix): string {
  return KeyPrefix[kind] + base62(randomBytes(KEY_RANDOM_BYTES), KEY_BODY_LENGTH);
}

/** The part of a key kept in clear. */
export function keyPrefixOf(key: string): string {
  return key.slice(0, KEY_PREFIX_LENGTH);
}

/** When a key created at `now` expires: test keys 4 hours later, live keys never. */
export function expiryFor(kind: KeyKind, now: Date): Date | null {
  return kind === 'test' ? new Date(now.getTime() + TEST_KEY_TTL_MS) : null;
}

/**
 * A new signing secret for recipient tokens: the prefix, then 32 random bytes in base62. Tokens
 * are signed with the UTF-8 bytes of this whole string (prefix included).
 */
export function generateSigningSecret(): string {
  return SIGNING_SECRET_PREFIX + base62(randomBytes(KEY_RANDOM_BYTES), KEY_BODY_LENGTH);
}

/**
 * What a caller asks for when creating a key. Its push settings (issue 40, push-settings.ts):
 * `push_after_ms` turns push fallback on; the TTL, template and payload choice need it.
 */
export interface KeyRequest extends PushRequestFields {
  kind: KeyKind;
  client: Client;
  /** Required for web keys (the origin they may be used from), refused for mobile keys. */
  domain?: string | undefined;
  /** What the key may do; default `both`. */
  scope?: string | undefined;
  /**
   * Whether its sockets need a recipient token; default: yes for the keys token-rule.ts's
   * `requiresTokenByDefault` names (web keys in inbox mode), no for the rest.
   */
  require_token?: boolean | undefined;
  /**
   * The explicit opt-out of that default: a web inbox key whose inbox anyone holding the public
   * key and a user's id may read. Only for keys that would require tokens by default.
   */
  allow_unsigned_recipients?: boolean | undefined;
  /** Inbox mode: keep every event this many days (1–365) per recipient; default none. */
  inbox_days?: number | null | undefined;
  /** Its events' payloads go into the account's webhook bodies (issue 39); default false. */
  webhook_payload?: boolean | undefined;
  /** What the user calls the key (key-name.ts); default none. */
  name?: string | null | undefined;
}

/** A validated key request: the domain normalised, the expiry fixed, push columns resolved. */
export interface KeySpec extends PushColumns {
  kind: KeyKind;
  client: Client;
  domain: string | null;
  expires_at: Date | null;
  scope: KeyScope;
  require_token: boolean;
  /** Created with the opt-out: a web inbox key left without tokens on purpose (shown as a warning). */
  allow_unsigned_recipients: boolean;
  inbox_days: number | null;
  webhook_payload: boolean;
  name: string | null;
  /** Not stored: tokens came on by the rule (token-rule.ts), not because they were asked for. */
  tokens_by_default: boolean;
}

/**
 * Checks a key request and resolves what the key will be. Throws a {@link HeraldError} naming the
 * field at fault: a web key without a domain, a mobile key with one, a bad domain, a token
 * choice the rule refuses (token-rule.ts), or push settings out of bounds (push-settings.ts).
 */
export function resolveKeySpec(request: KeyRequest, now: Date): KeySpec {
  // Typed callers cannot get these wrong, but the CLI and a future HTTP API pass user input.
  if (!KeyKind.safeParse(request.kind).success) {
    throw new HeraldError('invalid_field', 'kind must be "live" or "test"', { field: 'kind' });
  }
  if (!Client.safeParse(request.client).success) {
    throw new HeraldError('invalid_client', 'client must be "web" or "mobile"', {
      field: 'client',
    });
  }
  const kind = request.kind;
  const hasDomain = request.domain !== undefined && request.domain !== '';
  if (request.client === 'web' && !hasDomain) {
    throw new HeraldError(
      'missing_field',
      'domain is required for a web key: give the origin your web app is served from, such as https://app.example.com (or create a mobile key for servers and apps)',
      { field: 'domain' },
    );
  }
  if (request.client === 'mobile' && hasDomain) {
    throw new HeraldError(
      'invalid_field',
      'domain is only for web keys: drop the domain for a mobile key, or create a web key',
      { field: 'domain' },
    );
  }
  const scope = KeyScope.safeParse(request.scope ?? 'both');
  if (!scope.success) {
    throw new HeraldError(
      'invalid_field',
      'scope must be "subscribe" (opens sockets: browsers and apps), "dispatch" (sends: servers) or "both"',
      { field: 'scope' },
    );
  }
  const inboxDays = request.inbox_days ?? null;
  if (inboxDays !== null && !InboxDays.safeParse(inboxDays).success) {
    throw new HeraldError(
      'invalid_field',
      `inbox_days must be a whole number of days from ${INBOX_MIN_DAYS} to ${INBOX_MAX_DAYS}: how long every event of the key is kept per recipient (leave it out for the default, live events not stored)`,
      { field: 'inbox_days' },
    );
  }
  const webhookPayload = request.webhook_payload ?? false;
  if (webhookPayload && scope.data === 'subscribe') {
    throw new HeraldError(
      'invalid_field',
      'webhook_payload is for keys that send events (scope dispatch or both): a subscribe key sends nothing, so there is no payload to put in a webhook; leave it out, or give the sending key the flag',
      { field: 'webhook_payload' },
    );
  }
  const push = resolveKeyPush(request, scope.data);
  const tokens = resolveTokenRule(request, {
    client: request.client,
    scope: scope.data,
    inbox_days: inboxDays,
  });
  return {
    kind,
    client: request.client,
    domain: request.client === 'web' ? normalizeDomain(request.domain ?? '', kind) : null,
    expires_at: expiryFor(kind, now),
    scope: scope.data,
    require_token: tokens.require_token,
    allow_unsigned_recipients: tokens.allow_unsigned_recipients,
    inbox_days: inboxDays,
    webhook_payload: webhookPayload,
    name: resolveKeyName(request.name),
    ...push,
    tokens_by_default: tokens.by_default,
  };
}

function base62(bytes: Buffer, length: number): string {
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(length, '0');
}

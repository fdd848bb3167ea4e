import { iso } from '../dates.js';
import { pushView } from './push-settings.js';
import type { RotatedSecret, TokensTurnedOn } from './signing-secrets.js';
import type { ApiKeySummary, CreatedApiKey } from './store.js';
import { unsignedRecipientsLine } from './token-rule.js';

/** A key as the API lists it: never the key, never its hash. */
export function keyView(k: ApiKeySummary) {
  return {
    id: k.id,
    /** What the user calls it; null: unnamed (lists show the prefix). */
    name: k.name,
    key_prefix: k.key_prefix,
    kind: k.kind,
    client: k.client,
    domain: k.domain,
    expires_at: iso(k.expires_at),
    revoked_at: iso(k.revoked_at),
    created_at: iso(k.created_at),
    scope: k.scope,
    require_token: k.require_token,
    inbox_days: k.inbox_days,
    allow_unsigned_recipients: k.allow_unsigned_recipients,
    webhook_payload: k.webhook_payload,
    /** Push fallback (issue 40): its delay, TTL, template and payload choice; null: never pushes. */
    push: pushView(k),
    /** A web key without tokens: what a stranger with it can do, and how to turn tokens on. */
    token_warning: unsignedRecipientsLine(k),
  };
}

/** A key just created: the summary plus the full key, shown this once. */
export function createdKeyView(k: CreatedApiKey) {
  return {
    ...keyView(k),
    key: k.key,
    tokens_by_default: k.tokens_by_default,
    ...(k.signing_secret === undefined ? {} : { signing_secret: k.signing_secret }),
  };
}

/** A rotation: the key, its new signing secret (shown this once) and when the old one stops. */
export function rotatedView(r: RotatedSecret) {
  return {
    ...keyView(r.key),
    signing_secret: r.signing_secret,
    previous_secret_valid_until: iso(r.previous_valid_until),
  };
}

/** Tokens turned on for an existing key: the key and its first signing secret, shown this once. */
export function tokensOnView(t: TokensTurnedOn) {
  return { ...keyView(t.key), signing_secret: t.signing_secret };
}

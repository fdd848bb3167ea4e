import { iso } from '../dates.js';
import type { RotatedSecret } from './signing-secrets.js';
import type { ApiKeySummary, CreatedApiKey } from './store.js';

/** A key as the API lists it: never the key, never its hash. */
export function keyView(k: ApiKeySummary) {
  return {
    id: k.id,
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
  };
}

/** A key just created: the summary plus the full key, shown this once. */
export function createdKeyView(k: CreatedApiKey) {
  return {
    ...keyView(k),
    key: k.key,
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

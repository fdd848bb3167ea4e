import type { ApiKeySummary, CreatedApiKey } from '../api-keys.js';

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
  };
}

/** A key just created: the summary plus the full key, shown this once. */
export function createdKeyView(k: CreatedApiKey) {
  return { ...keyView(k), key: k.key };
}

export function iso(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}

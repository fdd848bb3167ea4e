/**
 * What can be an API key at all, checked before any lookup so a malformed key costs no round trip
 * to auth. Issued keys are a prefix and 43 base62 characters; the check is wider (letters, digits,
 * `_`, `-`, up to 128 characters after the prefix) so it only refuses what no key generation ever
 * produced, never a key that exists. `hk_dash_` is the dashboard's own credential (dashboard.ts).
 */
export const API_KEY_FORMAT = /^hk_(?:live|test|dash)_[0-9A-Za-z_-]{1,128}$/;

/** True when `value` has the shape of an API key (see {@link API_KEY_FORMAT}). */
export function isWellFormedApiKey(value: unknown): value is string {
  return typeof value === 'string' && API_KEY_FORMAT.test(value);
}

import type { SecretBox } from '@herald/kit';
import { HeraldError } from '@herald/proto';
import { generateSigningSecret } from './key-spec.js';

/*
 * A key's signing secret must verify HMACs, so unlike a key it cannot be stored as a hash. It is
 * sealed with kit's SecretBox under SECRET_ENCRYPTION_KEY, a key only auth and the admin CLI hold
 * (from config, never in the database), bound to its key row (sealContext).
 */

export const NO_BOX =
  'this Herald has no SECRET_ENCRYPTION_KEY, which seals signing secrets at rest: the operator sets it on auth and the admin CLI (the base64 of 32 random bytes, `openssl rand -base64 32`)';

/** The sealed context of a key row: a sealed secret opens only on the row it was made for. */
export function sealContext(keyId: string): string {
  return `api_keys.signing_secret:${keyId}`;
}

/** A new secret for key `keyId`, in clear (shown once) and sealed (stored). */
export function newSigningSecret(
  box: SecretBox | undefined,
  keyId: string,
): { plain: string; sealed: string } {
  if (!box)
    throw new HeraldError('invalid_field', `require_token: ${NO_BOX}`, { field: 'require_token' });
  const plain = generateSigningSecret();
  return { plain, sealed: box.seal(plain, sealContext(keyId)) };
}

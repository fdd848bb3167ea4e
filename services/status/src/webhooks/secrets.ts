import { randomBytes } from 'node:crypto';
import type { SecretBox } from '@herald/kit';
import { HeraldError } from '@herald/proto';

/** The Standard Webhooks form: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The HMAC key a secret stands for: the bytes its base64 (after `whsec_`) encodes. */
export function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.slice('whsec_'.length), 'base64');
}

/** A sealed secret opens only on the endpoint row it was made for. */
export function sealContext(endpointId: string): string {
  return `webhook_endpoints.secret:${endpointId}`;
}

export const NO_WEBHOOK_BOX =
  'this Herald has no WEBHOOK_SECRET_KEY, which seals webhook secrets at rest: the operator sets it on the status service (the base64 of 32 random bytes, `openssl rand -base64 32`)';

/** A new secret for endpoint `id`, in clear (shown once) and sealed (stored). */
export function issueSecret(
  box: SecretBox | undefined,
  id: string,
): { plain: string; sealed: string } {
  if (!box) throw new HeraldError('unavailable', NO_WEBHOOK_BOX);
  const plain = newWebhookSecret();
  return { plain, sealed: box.seal(plain, sealContext(id)) };
}

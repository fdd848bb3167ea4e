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

/** What a message needs to be signed: its endpoint's id and sealed secrets. */
export interface SealedSecrets {
  endpoint_id: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_until: Date | null;
}

/** The endpoint's secret, and the one it replaced while their overlap lasts, as HMAC keys. */
export function signingKeys(box: SecretBox | undefined, m: SealedSecrets, now: number): Buffer[] {
  if (!box) throw new Error(NO_WEBHOOK_BOX);
  const context = sealContext(m.endpoint_id);
  const open = (sealed: string) => {
    try {
      return secretBytes(box.open(sealed, context));
    } catch {
      throw new Error('the endpoint secret does not open under this WEBHOOK_SECRET_KEY');
    }
  };
  const keys = [open(m.secret_sealed)];
  if (m.previous_secret_sealed && m.previous_until && m.previous_until.getTime() > now) {
    // One sealed under a key since replaced is left out: the new secret alone signs.
    try {
      keys.push(open(m.previous_secret_sealed));
    } catch {}
  }
  return keys;
}

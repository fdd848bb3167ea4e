import { randomBytes, randomInt } from 'node:crypto';
import type { SecretBox } from '@herald/kit';
import { HeraldError } from '@herald/proto';

/*
 * A Pusher app's credentials (issue 41). The id and key are public (pusher-js puts the key in its
 * URL); the secret signs channel authorisations, sign-ins and HTTP requests, so, like a key's
 * signing secret, it is sealed with kit's SecretBox under SECRET_ENCRYPTION_KEY and bound to its
 * row (sealContext). It crosses NATS only in the rt.auth.pusher reply, to the edge and ingress.
 */

export const NO_PUSHER_BOX =
  'this Herald has no SECRET_ENCRYPTION_KEY, which seals Pusher app secrets at rest: the operator sets it on auth and the admin CLI (the base64 of 32 random bytes, `openssl rand -base64 32`)';

/** A new app id: 10 decimal digits, the first not 0. */
export function generateAppId(): string {
  return String(randomInt(1_000_000_000, 10_000_000_000));
}

/** A new app key: 20 lower-case hex characters (proto's PUSHER_APP_KEY). */
export function generateAppKey(): string {
  return randomBytes(10).toString('hex');
}

/** The sealed context of an app row: a sealed secret opens only on the app it was made for. */
export function appSealContext(appId: string): string {
  return `pusher_apps.secret:${appId}`;
}

/** A new secret for app `appId` (20 random bytes, 40 hex characters): in clear and sealed. */
export function newAppSecret(
  box: SecretBox | undefined,
  appId: string,
): { plain: string; sealed: string } {
  if (!box) throw new HeraldError('unavailable', NO_PUSHER_BOX);
  const plain = randomBytes(20).toString('hex');
  return { plain, sealed: box.seal(plain, appSealContext(appId)) };
}

/** Opens an app's sealed secret; throws (never quoting it) when there is no box or it does not open. */
export function openAppSecret(box: SecretBox | undefined, appId: string, sealed: string): string {
  if (!box) throw new Error(NO_PUSHER_BOX);
  return box.open(sealed, appSealContext(appId));
}

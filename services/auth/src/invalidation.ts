import type { Logger } from '@herald/kit';
import { AuthInvalidate, subjects } from '@herald/proto';
import type { Kysely } from 'kysely';
import { JSONCodec, type NatsConnection } from 'nats';
import type { AuthDb } from './db-schema.js';
import { type ApiKeySummary, revokeApiKey } from './keys/store.js';

const codec = JSONCodec<AuthInvalidate>();

/**
 * Broadcasts an invalidation on `rt.auth.invalidate` and flushes, so when this resolves the
 * server has it and every KeyVerifier (ingress, edges) is dropping its cached answer.
 */
export async function publishInvalidation(nc: NatsConnection, msg: AuthInvalidate): Promise<void> {
  nc.publish(subjects.authInvalidate, codec.encode(AuthInvalidate.parse(msg)));
  await nc.flush();
}

/** The broadcast after a key is revoked: its cached answers go, its sockets are re-checked. */
export function revokedMessage(key: Pick<ApiKeySummary, 'id' | 'account_id'>): AuthInvalidate {
  return { v: 1, key_id: key.id, account_id: key.account_id, reason: 'revoked' };
}

/**
 * Broadcasts the revocation of each of these keys (dashboard listener credentials a logout or a
 * password reset deleted), so that the sockets opened with them close at once. A failed broadcast
 * is logged: the rows are gone, so verification refuses the keys anyway once caches expire.
 */
export async function broadcastRevoked(
  deps: { nc: NatsConnection; logger: Logger },
  keys: readonly Pick<ApiKeySummary, 'id' | 'account_id'>[],
): Promise<void> {
  for (const key of keys) {
    await publishInvalidation(deps.nc, revokedMessage(key)).catch((err: unknown) =>
      deps.logger.warn({ err: String(err) }, 'could not broadcast a listener revocation'),
    );
  }
}

/** The broadcast for each Test key a reset replaced. */
export function resetMessage(key: Pick<ApiKeySummary, 'id' | 'account_id'>): AuthInvalidate {
  return { v: 1, key_id: key.id, account_id: key.account_id, reason: 'reset' };
}

/** The broadcast after an account's plan or period changed: every key of it is re-verified. */
export function planChangedMessage(accountId: string): AuthInvalidate {
  return { v: 1, account_id: accountId, reason: 'plan_changed' };
}

/**
 * The broadcast after a web key's domain changed: sockets from the old Origin are re-checked.
 * Only the key is named, since naming the account would re-verify all of its keys for nothing.
 */
/**
 * A key now requires recipient tokens: callers drop the cached answer, and the edges close the
 * key's sockets that opened without a token.
 */
export function tokenRequiredMessage(key: Pick<ApiKeySummary, 'id'>): AuthInvalidate {
  return { v: 1, key_id: key.id, reason: 'token_required' };
}

/** A key's signing secret was rotated: callers drop the cached secrets and ask again. */
export function secretRotatedMessage(key: Pick<ApiKeySummary, 'id'>): AuthInvalidate {
  return { v: 1, key_id: key.id, reason: 'secret_rotated' };
}

/**
 * A Pusher app bound to this key was created, deleted or given a new secret: the edge and ingress
 * drop their cached rt.auth.pusher answers of the key's apps.
 */
export function pusherAppMessage(keyId: string): AuthInvalidate {
  return { v: 1, key_id: keyId, reason: 'pusher_app' };
}

export function domainChangedMessage(key: Pick<ApiKeySummary, 'id'>): AuthInvalidate {
  return { v: 1, key_id: key.id, reason: 'domain_changed' };
}

/**
 * Revokes a key in the database, then broadcasts it. The database is the truth: a verification
 * after the update is refused even if the broadcast fails (cached answers then expire within the
 * callers' cache TTL), and revoking again re-broadcasts.
 */
export async function revokeKey(
  deps: { db: Kysely<AuthDb>; nc: NatsConnection },
  keyId: string,
): Promise<ApiKeySummary> {
  const key = await revokeApiKey(deps.db, keyId);
  await publishInvalidation(deps.nc, revokedMessage(key));
  return key;
}

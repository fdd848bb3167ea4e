import { hashKey } from '@herald/access';
import { type DashboardScope, dashboardRecipient } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { AuthDb } from '../db-schema.js';
import { generateApiKey } from './key-spec.js';

/** What a dashboard credential is for (proto DashboardScope). */
export type DashboardRole = DashboardScope['role'];

/** A credential just minted: its value exists only here and in the caller's hands. */
export interface MintedDashboardKey {
  id: string;
  key: string;
  account_id: string;
  recipient: string;
  expires_at: Date;
}

export interface DashboardKeyRequest {
  accountId: string;
  role: DashboardRole;
  /** A listener's Origin (the socket must come from it); null for a sender or a script. */
  domain: string | null;
  /** The login a listener belongs to (logout ends it); null for a sender. */
  sessionId: string | null;
  expiresAt: Date;
}

/**
 * Mints a dashboard credential (`hk_dash_`): stores its hash, returns its value once. Expired
 * credentials of the account are deleted on the way, so the table holds about one row per open
 * dashboard and one sender per auth instance.
 */
export async function mintDashboardKey(
  db: Kysely<AuthDb>,
  req: DashboardKeyRequest,
  now: Date,
): Promise<MintedDashboardKey> {
  const key = generateApiKey('dashboard');
  await db
    .deleteFrom('dashboard_keys')
    .where('account_id', '=', req.accountId)
    .where('expires_at', '<=', now)
    .execute();
  const row = await db
    .insertInto('dashboard_keys')
    .values({
      account_id: req.accountId,
      key_hash: hashKey(key),
      role: req.role,
      domain: req.domain,
      session_id: req.sessionId,
      expires_at: req.expiresAt,
    })
    .returning(['id', 'expires_at'])
    .executeTakeFirstOrThrow();
  return {
    id: row.id,
    key,
    account_id: req.accountId,
    recipient: dashboardRecipient(req.accountId),
    expires_at: row.expires_at,
  };
}

/** The credential with this hash and its account's subscription; undefined when none. */
export async function findDashboardKey(db: Kysely<AuthDb>, keyHash: string) {
  return db
    .selectFrom('dashboard_keys')
    .leftJoin('subscriptions', 'subscriptions.account_id', 'dashboard_keys.account_id')
    .selectAll('dashboard_keys')
    .select(['subscriptions.plan', 'subscriptions.period_end'])
    .where('dashboard_keys.key_hash', '=', keyHash)
    .executeTakeFirst();
}

/** Deletes a login's listeners (at logout) and returns them, so their sockets can be closed. */
export async function dropSessionListeners(
  db: Kysely<AuthDb>,
  sessionId: string,
): Promise<{ id: string; account_id: string }[]> {
  return db
    .deleteFrom('dashboard_keys')
    .where('session_id', '=', sessionId)
    .returning(['id', 'account_id'])
    .execute();
}

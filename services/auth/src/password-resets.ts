import { randomBytes } from 'node:crypto';
import { hashKey } from '@herald/access';
import { HeraldError } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { AuthDb } from './db-schema.js';

/** How long a printed reset token may be used. */
export const RESET_TOKEN_TTL_MS = 3600_000;

/**
 * Makes a one-time password-reset token for the account with this email. Herald sends no mail:
 * support runs `admin account reset-token` and hands the token to the verified owner.
 */
export async function createResetToken(
  db: Kysely<AuthDb>,
  email: string,
  now: number,
): Promise<{ token: string; account_id: string; expires_at: Date }> {
  const account = await db
    .selectFrom('accounts')
    .select('id')
    .where('email', '=', email.trim().toLowerCase())
    .executeTakeFirst();
  if (!account) {
    throw new HeraldError('not_found', `No account has the email ${JSON.stringify(email)}`, {
      field: 'email',
    });
  }
  const token = `hr_${randomBytes(24).toString('base64url')}`;
  const expires_at = new Date(now + RESET_TOKEN_TTL_MS);
  await db
    .insertInto('password_resets')
    .values({ token_hash: hashKey(token), account_id: account.id, expires_at })
    .execute();
  return { token, account_id: account.id, expires_at };
}

/**
 * Uses a reset token: sets the new password hash and ends every session of the account, with the
 * dashboard listener credentials those logins minted, in one transaction. Resolves with those
 * credentials, whose revocation the caller broadcasts so that their open sockets close at once.
 * The token is deleted whether it had expired or not; an unknown one is refused.
 */
export async function useResetToken(
  db: Kysely<AuthDb>,
  token: string,
  passwordHash: string,
  now: number,
): Promise<{ id: string; account_id: string }[]> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .deleteFrom('password_resets')
      .where('token_hash', '=', hashKey(token))
      .returning(['account_id', 'expires_at'])
      .executeTakeFirst();
    if (!row || row.expires_at.getTime() <= now) {
      throw new HeraldError(
        'invalid_credentials',
        'This reset token is unknown, used or expired: ask support for a new one',
        { field: 'token' },
      );
    }
    await trx
      .updateTable('accounts')
      .set({ password_hash: passwordHash })
      .where('id', '=', row.account_id)
      .execute();
    // Deleting the sessions would drop these too (cascade), but silently: named here to be revoked.
    const listeners = await trx
      .deleteFrom('dashboard_keys')
      .where('account_id', '=', row.account_id)
      .returning(['id', 'account_id'])
      .execute();
    await trx.deleteFrom('sessions').where('account_id', '=', row.account_id).execute();
    return listeners;
  });
}

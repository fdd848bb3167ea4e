import { randomBytes } from 'node:crypto';
import { digestsEqual, hashKey } from '@herald/access';
import { assertToken, backendPermissions, HeraldError } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { AuthDb } from '../db-schema.js';

export interface CreatedNatsUser {
  id: string;
  account_id: string;
  /** The login name: `hb_` and 24 hex digits. */
  user: string;
  /** Shown once: only its hash is kept. */
  password: string;
}

/** A new NATS user for a customer backend of `account` (which must exist). */
export async function createNatsUser(
  db: Kysely<AuthDb>,
  account: string,
): Promise<CreatedNatsUser> {
  try {
    assertToken('account', account);
  } catch {
    throw new HeraldError(
      'invalid_field',
      `--account must be an account id (a lower-case UUID), got ${JSON.stringify(account)}`,
      { field: 'account' },
    );
  }
  const found = await db
    .selectFrom('accounts')
    .select('id')
    .where('id', '=', account)
    .executeTakeFirst();
  if (!found) {
    throw new HeraldError('not_found', `no account ${account}: create it first (account create)`, {
      field: 'account',
    });
  }
  const user = `hb_${randomBytes(12).toString('hex')}`;
  const password = randomBytes(32).toString('base64url');
  const row = await db
    .insertInto('nats_users')
    .values({ account_id: account, username: user, password_hash: hashKey(password) })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: row.id, account_id: account, user, password };
}

/**
 * The account whose backend logs in with `user` and `password`, or undefined (unknown, revoked,
 * wrong password, or an account that no longer exists: the row goes with it).
 */
export async function natsUserAccount(
  db: Kysely<AuthDb>,
  user: string,
  password: string,
): Promise<string | undefined> {
  if (!/^hb_[0-9a-f]{24}$/.test(user) || password === '') return undefined;
  const row = await db
    .selectFrom('nats_users')
    .select(['account_id', 'password_hash'])
    .where('username', '=', user)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  return digestsEqual(row.password_hash, hashKey(password)) ? row.account_id : undefined;
}

/** What a backend's NATS user may publish (request) to: its account's dispatch subjects. */
export function natsUserSubjects(account: string): string[] {
  return backendPermissions(account).publish.allow;
}

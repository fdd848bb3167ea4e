import { randomBytes } from 'node:crypto';
import { digestsEqual, hashKey } from '@herald/access';
import type { Kysely } from 'kysely';
import type { AuthDb } from '../db-schema.js';

/** 256 random bits per token: unguessable, so a plain SHA-256 is enough at rest. */
const TOKEN_BYTES = 32;

/** A session just opened: the only time its tokens exist outside the client. */
export interface NewSession {
  /** The `herald_session` cookie's value. */
  token: string;
  /** The value the client must send back in `X-Herald-CSRF` on state-changing requests. */
  csrf: string;
  expires_at: Date;
}

/** A live session as requests see it. */
export interface Session {
  id: string;
  account_id: string;
  csrf_hash: string;
  expires_at: Date;
}

/** Opens a session for the account; stores only the hashes of its two tokens. */
export async function createSession(
  db: Kysely<AuthDb>,
  accountId: string,
  ttlMs: number,
  now: number,
): Promise<NewSession> {
  const token = randomBytes(TOKEN_BYTES).toString('base64url');
  const csrf = randomBytes(TOKEN_BYTES).toString('base64url');
  const expires_at = new Date(now + ttlMs);
  // Logins are the natural moment to forget this account's expired sessions: no sweeper needed.
  await db
    .deleteFrom('sessions')
    .where('account_id', '=', accountId)
    .where('expires_at', '<=', new Date(now))
    .execute();
  await db
    .insertInto('sessions')
    .values({
      account_id: accountId,
      token_hash: hashKey(token),
      csrf_hash: hashKey(csrf),
      created_at: new Date(now),
      expires_at,
    })
    .execute();
  return { token, csrf, expires_at };
}

/** The unexpired session a cookie token opens, or undefined. */
export async function findSession(
  db: Kysely<AuthDb>,
  token: string,
  now: number,
): Promise<Session | undefined> {
  const hash = hashKey(token);
  const row = await db
    .selectFrom('sessions')
    .select(['id', 'account_id', 'token_hash', 'csrf_hash', 'expires_at'])
    .where('token_hash', '=', hash)
    .where('expires_at', '>', new Date(now))
    .executeTakeFirst();
  if (!row || !digestsEqual(row.token_hash, hash)) return undefined;
  return {
    id: row.id,
    account_id: row.account_id,
    csrf_hash: row.csrf_hash,
    expires_at: row.expires_at,
  };
}

/** True when `csrf` is the session's CSRF token, compared in constant time. */
export function csrfMatches(session: Session, csrf: string | undefined): boolean {
  return csrf !== undefined && csrf !== '' && digestsEqual(session.csrf_hash, hashKey(csrf));
}

export async function deleteSession(db: Kysely<AuthDb>, id: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', id).execute();
}

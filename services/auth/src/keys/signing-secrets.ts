import type { SecretBox } from '@herald/kit';
import { HeraldError, type SigningSecret } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { AuthDb } from '../db-schema.js';
import { parseId } from '../ids.js';
import { NO_BOX, newSigningSecret, sealContext } from './secret-box.js';
import { type ApiKeySummary, SUMMARY_COLUMNS } from './store.js';

/** Default TOKEN_SECRET_OVERLAP_MS: the replaced secret stays valid as long as a token may live. */
export const DEFAULT_SECRET_OVERLAP_MS = 24 * 3600_000;

/** The columns verification reads to give the edge a key's secrets. */
export interface SealedSecrets {
  id: string;
  signing_secret: string | null;
  previous_signing_secret: string | null;
  previous_secret_until: Date | null;
}

/**
 * The secrets a token of this key may be signed with right now: the current one, and the one a
 * rotation replaced while its overlap lasts. Throws (auth answers `internal`, logged) when the box
 * is missing or a secret does not open: a key whose secret cannot be read must not connect.
 */
export function openSigningSecrets(
  box: SecretBox | undefined,
  row: SealedSecrets,
  now: number,
): SigningSecret[] {
  if (!box) throw new Error(`a key requires tokens, but ${NO_BOX}`);
  if (row.signing_secret === null)
    throw new Error(`key ${row.id} requires tokens but has no secret`);
  const secrets: SigningSecret[] = [
    { secret: box.open(row.signing_secret, sealContext(row.id)), until: null },
  ];
  const until = row.previous_secret_until?.getTime() ?? null;
  if (row.previous_signing_secret !== null && until !== null && now < until) {
    secrets.push({ secret: box.open(row.previous_signing_secret, sealContext(row.id)), until });
  }
  return secrets;
}

/** A rotation's outcome: the key, its new secret (shown once) and when the old one stops. */
export interface RotatedSecret {
  key: ApiKeySummary;
  signing_secret: string;
  previous_valid_until: Date;
}

/**
 * Gives a key that requires tokens a new signing secret. The one it replaces stays valid for
 * `overlapMs` (TOKEN_SECRET_OVERLAP_MS), so tokens already minted keep working while servers move
 * to the new one; a second rotation within the overlap ends the first one's old secret at once.
 * With `accountId`, only that account's key is touched. Throws naming `key` otherwise.
 */
export async function rotateSigningSecret(
  db: Kysely<AuthDb>,
  box: SecretBox | undefined,
  keyId: string,
  overlapMs: number,
  now: Date = new Date(),
  accountId?: string,
): Promise<RotatedSecret> {
  const id = parseId('key', keyId, 'give the key id `key list --account ID` prints');
  return db.transaction().execute(async (tx) => {
    let query = tx
      .selectFrom('api_keys')
      .select(['id', 'require_token', 'revoked_at', 'signing_secret'])
      .where('id', '=', id)
      .forUpdate();
    if (accountId !== undefined) query = query.where('account_id', '=', accountId);
    const row = await query.executeTakeFirst();
    if (!row) throw noSuchKey(id);
    if (!row.require_token || row.revoked_at !== null) {
      throw new HeraldError(
        'invalid_field',
        row.revoked_at !== null
          ? `key ${id} is revoked: create a new key`
          : `key ${id} does not require tokens, so it has no signing secret: turn them on with \`key require-token --key ${id}\` (its first secret is shown then)`,
        { field: 'key' },
      );
    }
    const secret = newSigningSecret(box, id);
    const previousUntil = new Date(now.getTime() + overlapMs);
    const key = await tx
      .updateTable('api_keys')
      .set({
        signing_secret: secret.sealed,
        previous_signing_secret: row.signing_secret,
        previous_secret_until: previousUntil,
      })
      .where('id', '=', id)
      .returning(SUMMARY_COLUMNS)
      .executeTakeFirstOrThrow();
    return { key, signing_secret: secret.plain, previous_valid_until: previousUntil };
  });
}

/** Turning tokens on: the key, and its first signing secret (shown once). */
export interface TokensTurnedOn {
  key: ApiKeySummary;
  signing_secret: string;
}

/**
 * Makes an existing key require recipient tokens (`key require-token`, POST
 * /v1/keys/:id/require-token): gives it a signing secret, sealed by `box`, and clears its opt-out.
 * The caller broadcasts `token_required`, so the edges close its sockets that have no token. With
 * `accountId`, only that account's key is touched. Throws naming `key` for an unknown or revoked
 * key, a dispatch key (it opens no sockets), or one that already requires tokens.
 */
export async function requireTokens(
  db: Kysely<AuthDb>,
  box: SecretBox | undefined,
  keyId: string,
  accountId?: string,
): Promise<TokensTurnedOn> {
  const id = parseId('key', keyId, 'give the key id `key list --account ID` prints');
  return db.transaction().execute(async (tx) => {
    let query = tx
      .selectFrom('api_keys')
      .select(['id', 'require_token', 'revoked_at', 'scope'])
      .where('id', '=', id)
      .forUpdate();
    if (accountId !== undefined) query = query.where('account_id', '=', accountId);
    const row = await query.executeTakeFirst();
    if (!row) throw noSuchKey(id);
    const refusal =
      row.revoked_at !== null
        ? `key ${id} is revoked: create a new key`
        : row.scope === 'dispatch'
          ? `key ${id} is a dispatch key, which opens no sockets, so tokens do not apply: tokens are for the keys browsers and apps connect with`
          : row.require_token
            ? `key ${id} already requires tokens: for a new signing secret, rotate it (\`key rotate-secret --key ${id}\`)`
            : undefined;
    if (refusal) throw new HeraldError('invalid_field', refusal, { field: 'key' });
    const secret = newSigningSecret(box, id);
    const key = await tx
      .updateTable('api_keys')
      .set({
        require_token: true,
        allow_unsigned_recipients: false,
        signing_secret: secret.sealed,
        previous_signing_secret: null,
        previous_secret_until: null,
      })
      .where('id', '=', id)
      .returning(SUMMARY_COLUMNS)
      .executeTakeFirstOrThrow();
    return { key, signing_secret: secret.plain };
  });
}

/**
 * The current signing secret of a key that requires tokens, opened (`token create`, which signs a
 * token with it for trying a key out). Throws naming `key` for an unknown or revoked key or one
 * without tokens.
 */
export async function currentSigningSecret(
  db: Kysely<AuthDb>,
  box: SecretBox | undefined,
  keyId: string,
): Promise<{ key: ApiKeySummary; secret: string }> {
  const id = parseId('key', keyId, 'give the key id `key list --account ID` prints');
  const row = await db
    .selectFrom('api_keys')
    .select([...SUMMARY_COLUMNS, 'signing_secret'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw noSuchKey(id);
  const { signing_secret: sealed, ...key } = row;
  if (key.revoked_at !== null || !key.require_token || sealed === null) {
    throw new HeraldError(
      'invalid_field',
      key.revoked_at !== null
        ? `key ${id} is revoked: create a new key`
        : `key ${id} does not require tokens, so its sockets need none: connect without one, or turn tokens on with \`key require-token --key ${id}\``,
      { field: 'key' },
    );
  }
  if (!box) throw new HeraldError('invalid_field', `key: ${NO_BOX}`, { field: 'key' });
  return { key, secret: box.open(sealed, sealContext(id)) };
}

function noSuchKey(id: string): HeraldError {
  return new HeraldError(
    'not_found',
    `key ${id} does not exist: give the key id \`key list --account ID\` prints`,
    { field: 'key' },
  );
}

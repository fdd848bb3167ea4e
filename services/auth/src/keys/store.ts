import { randomUUID } from 'node:crypto';
import { hashKey } from '@herald/access';
import type { SecretBox } from '@herald/kit';
import { HeraldError, type KeyKind } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { ApiKeyRow, AuthDb } from '../db-schema.js';
import { parseId } from '../ids.js';
import { isPgError, PgCodes } from '../pg-errors.js';
import { resolveKeyName } from './key-name.js';
import { generateApiKey, type KeyRequest, keyPrefixOf, resolveKeySpec } from './key-spec.js';
import { newSigningSecret } from './secret-box.js';

/** A key as lists show it: never the key, never its hash, never its signing secrets. */
export type ApiKeySummary = Pick<ApiKeyRow, (typeof SUMMARY_COLUMNS)[number]>;

/** A key just created: the only time the full key exists outside the caller's hands. */
export interface CreatedApiKey extends ApiKeySummary {
  key: string;
  /** Only for a key that requires tokens: its signing secret, shown this once. */
  signing_secret?: string;
  /** Tokens came on by the rule for web inbox keys (token-rule.ts), not because they were asked. */
  tokens_by_default: boolean;
}

/** The columns of an ApiKeySummary: everything but the hash and the sealed secrets. */
export const SUMMARY_COLUMNS = [
  'id',
  'account_id',
  'key_prefix',
  'kind',
  'client',
  'domain',
  'expires_at',
  'revoked_at',
  'created_at',
  'scope',
  'require_token',
  'inbox_days',
  'allow_unsigned_recipients',
  'webhook_payload',
  'push_after_ms',
  'push_ttl_s',
  'push_title',
  'push_body',
  'push_include_payload',
  'name',
] as const;

const ACCOUNT_HINT = 'give the id `account create` printed';
const KEY_HINT = 'give the key id `key list --account ID` prints (not the key itself)';

/**
 * Creates a key for an account and returns it with the full key, which is stored only as its
 * SHA-256, and for a key that requires tokens its signing secret, stored sealed by `box`.
 * `now` fixes a test key's expiry (4 hours later). Throws a {@link HeraldError} naming the field
 * at fault, or `account` when the account does not exist.
 */
export async function createApiKey(
  db: Kysely<AuthDb>,
  accountId: string,
  request: KeyRequest,
  now: Date = new Date(),
  box?: SecretBox,
): Promise<CreatedApiKey> {
  const account_id = parseId('account', accountId, ACCOUNT_HINT);
  const { tokens_by_default, ...spec } = resolveKeySpec(request, now);
  const key = generateApiKey(spec.kind);
  // The id is made here, not by the database: the sealed secret is bound to it.
  const id = randomUUID();
  const secret = spec.require_token ? newSigningSecret(box, id) : undefined;
  try {
    const row = await db
      .insertInto('api_keys')
      .values({
        id,
        account_id,
        key_hash: hashKey(key),
        key_prefix: keyPrefixOf(key),
        ...spec,
        signing_secret: secret?.sealed ?? null,
        created_at: now,
      })
      .returning(SUMMARY_COLUMNS)
      .executeTakeFirstOrThrow();
    return { ...row, key, tokens_by_default, ...(secret ? { signing_secret: secret.plain } : {}) };
  } catch (err) {
    if (isPgError(err, PgCodes.foreignKeyViolation)) throw noAccount(account_id);
    if (isPgError(err, PgCodes.uniqueViolation) && constraintOf(err) === ONE_TEST_KEY_INDEX) {
      throw testKeyExists(account_id);
    }
    throw err;
  }
}

/** Every key of an account, newest first, without keys or hashes. */
export async function listApiKeys(db: Kysely<AuthDb>, accountId: string): Promise<ApiKeySummary[]> {
  const account_id = parseId('account', accountId, ACCOUNT_HINT);
  const keys = await db
    .selectFrom('api_keys')
    .select(SUMMARY_COLUMNS)
    .where('account_id', '=', account_id)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
  if (keys.length === 0) {
    const account = await db
      .selectFrom('accounts')
      .select('id')
      .where('id', '=', account_id)
      .executeTakeFirst();
    if (!account) throw noAccount(account_id);
  }
  return keys;
}

/**
 * Marks a key revoked and returns it. Idempotent: revoking again keeps the first revocation time,
 * so a retry after a failed broadcast is safe. With `accountId`, only that account's key is
 * touched (the account API); another account's key is reported as absent. Throws naming `key`
 * when there is no such key.
 */
export async function revokeApiKey(
  db: Kysely<AuthDb>,
  keyId: string,
  accountId?: string,
): Promise<ApiKeySummary> {
  const id = parseId('key', keyId, KEY_HINT);
  let query = db
    .updateTable('api_keys')
    .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.fn<Date>('now')) }))
    .where('id', '=', id);
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  const row = await query.returning(SUMMARY_COLUMNS).executeTakeFirst();
  if (!row) throw noKey(id);
  return row;
}

/** One key of an account, without key or hash; throws naming `key` when the account has none such. */
export async function findApiKey(
  db: Kysely<AuthDb>,
  accountId: string,
  keyId: string,
): Promise<ApiKeySummary> {
  const id = parseId('key', keyId, KEY_HINT);
  const row = await db
    .selectFrom('api_keys')
    .select(SUMMARY_COLUMNS)
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (!row) throw noKey(id);
  return row;
}

/**
 * Sets the registered domain of an account's key (already normalised by the caller). Only
 * unrevoked web keys have one; throws naming `key` or `domain` otherwise.
 */
export async function setApiKeyDomain(
  db: Kysely<AuthDb>,
  accountId: string,
  keyId: string,
  domain: string,
): Promise<ApiKeySummary> {
  const key = await findApiKey(db, accountId, keyId);
  if (key.client !== 'web') {
    throw new HeraldError(
      'invalid_field',
      'domain is only for web keys: a mobile key has no domain; create a web key for a browser app',
      { field: 'domain' },
    );
  }
  if (key.revoked_at !== null) {
    throw new HeraldError(
      'invalid_field',
      `key ${key.id} is revoked, so its domain no longer matters: create a new key`,
      { field: 'key' },
    );
  }
  return db
    .updateTable('api_keys')
    .set({ domain })
    .where('id', '=', key.id)
    .returning(SUMMARY_COLUMNS)
    .executeTakeFirstOrThrow();
}

/**
 * Names a key (blank: unnamed; resolveKeyName checks it) and returns it. Revoked keys may be
 * renamed too: the name is only a label. With `accountId`, only that account's key is touched.
 */
export async function setApiKeyName(
  db: Kysely<AuthDb>,
  keyId: string,
  name: string | null,
  accountId?: string,
): Promise<ApiKeySummary> {
  const id = parseId('key', keyId, KEY_HINT);
  let query = db
    .updateTable('api_keys')
    .set({ name: resolveKeyName(name) })
    .where('id', '=', id);
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  const row = await query.returning(SUMMARY_COLUMNS).executeTakeFirst();
  if (!row) throw noKey(id);
  return row;
}

/** How many keys of an account are not revoked, by kind. */
export async function countActiveKeys(
  db: Kysely<AuthDb>,
  accountId: string,
): Promise<Record<KeyKind, number>> {
  const rows = await db
    .selectFrom('api_keys')
    .select(['kind', (eb) => eb.fn.countAll<string>().as('n')])
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .groupBy('kind')
    .execute();
  const counts: Record<KeyKind, number> = { live: 0, test: 0 };
  for (const r of rows) counts[r.kind] = Number(r.n);
  return counts;
}

/** The account's Test keys, revoked ones included, newest first. */
export async function listTestKeys(
  db: Kysely<AuthDb>,
  accountId: string,
): Promise<ApiKeySummary[]> {
  return db
    .selectFrom('api_keys')
    .select(SUMMARY_COLUMNS)
    .where('account_id', '=', accountId)
    .where('kind', '=', 'test')
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
}

/** The partial unique index of migration 0002: one unrevoked Test key per account. */
const ONE_TEST_KEY_INDEX = 'api_keys_one_test_key_idx';

function constraintOf(err: unknown): unknown {
  return (err as { constraint?: unknown }).constraint;
}

/** 409 `test_key_exists`, with the way out (support resets it). */
export function testKeyExists(accountId: string): HeraldError {
  return new HeraldError(
    'test_key_exists',
    `account ${accountId} already has its Test key, and a Test key is generated only once: ask support to reset it (admin: \`key reset-test --account ${accountId}\`), or use a Live key on a paid plan`,
    { field: 'kind' },
  );
}

function noKey(id: string): HeraldError {
  return new HeraldError('not_found', `key ${id} does not exist: ${KEY_HINT}`, { field: 'key' });
}

export function noAccount(id: string): HeraldError {
  return new HeraldError(
    'not_found',
    `account ${id} does not exist: ${ACCOUNT_HINT}, or create one with \`account create --email E\``,
    { field: 'account' },
  );
}

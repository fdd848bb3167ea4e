import type { SecretBox } from '@herald/kit';
import { HeraldError, type PusherAppView } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { AuthDb, PusherAppRow } from '../db-schema.js';
import { parseId } from '../ids.js';
import { isPgError, PgCodes } from '../pg-errors.js';
import { APPS_HINT, parseAppId, parseUserChannel, parseUserIds } from './requests.js';
import { generateAppId, generateAppKey, newAppSecret } from './secrets.js';

/** What creating an app takes; every field optional (docs/api.md, "Pusher protocol"). */
export interface PusherAppRequest {
  key_id?: string | undefined;
  user_ids?: string | undefined;
  user_channel?: string | null | undefined;
}

/** An app just made, or its secret just rotated: the only time the secret is shown. */
export interface PusherAppWithSecret extends PusherAppView {
  secret: string;
}

const ACCOUNT_HINT = 'give the id `account create` printed';
const KEYS_HINT = 'one of the account’s key ids (`key list --account ID`, GET /v1/keys)';

/** An app as lists show it: never its secret. */
export function appView(row: Omit<PusherAppRow, 'secret'>): PusherAppView {
  return {
    app_id: row.app_id,
    key: row.key,
    key_id: row.key_id,
    user_ids: row.user_ids,
    user_channel: row.user_channel,
    created_at: row.created_at.toISOString(),
  };
}

const VIEW_COLUMNS = [
  'app_id',
  'key',
  'account_id',
  'key_id',
  'user_ids',
  'user_channel',
  'created_at',
] as const;

/**
 * Makes an app for the account, bound to `key_id` (default: the account's only unrevoked Live key),
 * its secret sealed by `box`, while the account holds fewer than `maxApps`
 * (MAX_PUSHER_APPS_PER_ACCOUNT; 409 `too_many_apps`). Throws a {@link HeraldError} naming the field
 * at fault: `account`, `key_id`, `user_ids`, `user_channel`; `unavailable` without a box.
 */
export async function createPusherApp(
  db: Kysely<AuthDb>,
  box: SecretBox | undefined,
  accountId: string,
  request: PusherAppRequest,
  opts: { maxApps: number; now?: Date },
): Promise<PusherAppWithSecret> {
  const account_id = parseId('account', accountId, ACCOUNT_HINT);
  const user_ids = parseUserIds(request.user_ids);
  const user_channel = parseUserChannel(request.user_channel);
  // Random ids and keys collide almost never; a collision is simply drawn again.
  for (let attempt = 0; ; attempt++) {
    try {
      // The account row is locked before the count, so parallel creations keep to the cap.
      return await db.transaction().execute(async (tx) => {
        await lockAccount(tx, account_id);
        const key_id = await boundKey(tx, account_id, request.key_id);
        await belowCap(tx, account_id, opts.maxApps);
        const app_id = generateAppId();
        const secret = newAppSecret(box, app_id);
        const row = await tx
          .insertInto('pusher_apps')
          .values({
            app_id,
            key: generateAppKey(),
            secret: secret.sealed,
            account_id,
            key_id,
            user_ids,
            user_channel,
            created_at: opts.now ?? new Date(),
          })
          .returning(VIEW_COLUMNS)
          .executeTakeFirstOrThrow();
        return { ...appView(row), secret: secret.plain };
      });
    } catch (err) {
      if (attempt < 3 && isPgError(err, PgCodes.uniqueViolation)) continue;
      throw err;
    }
  }
}

async function belowCap(tx: Kysely<AuthDb>, accountId: string, maxApps: number): Promise<void> {
  const held = await tx
    .selectFrom('pusher_apps')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  if (Number(held.n) >= maxApps) {
    throw new HeraldError(
      'too_many_apps',
      `the account already holds ${held.n} Pusher apps, the most allowed (${maxApps}, MAX_PUSHER_APPS_PER_ACCOUNT): delete one it no longer uses, then create the new one`,
    );
  }
}

/** Every app of an account, newest first, without secrets. Throws naming `account` when absent. */
export async function listPusherApps(
  db: Kysely<AuthDb>,
  accountId: string,
): Promise<PusherAppView[]> {
  const account_id = parseId('account', accountId, ACCOUNT_HINT);
  const rows = await db
    .selectFrom('pusher_apps')
    .select(VIEW_COLUMNS)
    .where('account_id', '=', account_id)
    .orderBy('created_at', 'desc')
    .orderBy('app_id')
    .execute();
  if (rows.length === 0) await accountExists(db, account_id);
  return rows.map(appView);
}

/**
 * Deletes the account's app and returns it as it was. Another account's app is `not_found`, like
 * one that does not exist (naming `app_id`).
 */
export async function deletePusherApp(
  db: Kysely<AuthDb>,
  accountId: string,
  appId: string,
): Promise<PusherAppView> {
  const account_id = parseId('account', accountId, ACCOUNT_HINT);
  const app_id = parseAppId(appId);
  const row = await db
    .deleteFrom('pusher_apps')
    .where('app_id', '=', app_id)
    .where('account_id', '=', account_id)
    .returning(VIEW_COLUMNS)
    .executeTakeFirst();
  if (!row) throw noApp(app_id);
  return appView(row);
}

/** Gives the account's app a new secret (shown once); the old one stops at once. */
export async function rotatePusherSecret(
  db: Kysely<AuthDb>,
  box: SecretBox | undefined,
  accountId: string,
  appId: string,
): Promise<PusherAppWithSecret> {
  const account_id = parseId('account', accountId, ACCOUNT_HINT);
  const app_id = parseAppId(appId);
  const secret = newAppSecret(box, app_id);
  const row = await db
    .updateTable('pusher_apps')
    .set({ secret: secret.sealed })
    .where('app_id', '=', app_id)
    .where('account_id', '=', account_id)
    .returning(VIEW_COLUMNS)
    .executeTakeFirst();
  if (!row) throw noApp(app_id);
  return { ...appView(row), secret: secret.plain };
}

/** The account's app, without its secret; `not_found` naming `app_id` otherwise. */
export async function findPusherApp(
  db: Kysely<AuthDb>,
  accountId: string,
  appId: string,
): Promise<PusherAppView> {
  const account_id = parseId('account', accountId, ACCOUNT_HINT);
  const app_id = parseAppId(appId);
  const row = await db
    .selectFrom('pusher_apps')
    .select(VIEW_COLUMNS)
    .where('app_id', '=', app_id)
    .where('account_id', '=', account_id)
    .executeTakeFirst();
  if (!row) throw noApp(app_id);
  return appView(row);
}

/** An app with its sealed secret and its bound key's hash: what rt.auth.pusher answers from. */
export async function lookupPusherApp(
  db: Kysely<AuthDb>,
  by: { key: string } | { app_id: string },
): Promise<(PusherAppRow & { key_hash: string }) | undefined> {
  const query = db
    .selectFrom('pusher_apps')
    .innerJoin('api_keys', 'api_keys.id', 'pusher_apps.key_id')
    .selectAll('pusher_apps')
    .select('api_keys.key_hash');
  return 'key' in by
    ? query.where('pusher_apps.key', '=', by.key).executeTakeFirst()
    : query.where('pusher_apps.app_id', '=', by.app_id).executeTakeFirst();
}

/** The key the app binds to: the one named (the account's, not revoked), or the only Live key. */
async function boundKey(
  db: Kysely<AuthDb>,
  accountId: string,
  keyId: string | undefined,
): Promise<string> {
  if (keyId !== undefined) {
    const id = parseId('key_id', keyId, KEYS_HINT);
    const key = await db
      .selectFrom('api_keys')
      .select(['id', 'revoked_at'])
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!key) {
      throw new HeraldError(
        'not_found',
        `key_id ${id} is not a key of account ${accountId}: ${KEYS_HINT}`,
        { field: 'key_id' },
      );
    }
    if (key.revoked_at !== null) {
      throw new HeraldError(
        'invalid_field',
        `key_id ${id} is revoked: bind the app to a key that is not`,
        {
          field: 'key_id',
        },
      );
    }
    return key.id;
  }
  const live = await db
    .selectFrom('api_keys')
    .select('id')
    .where('account_id', '=', accountId)
    .where('kind', '=', 'live')
    .where('revoked_at', 'is', null)
    .limit(2)
    .execute();
  if (live.length !== 1 || live[0] === undefined) {
    throw new HeraldError(
      'missing_field',
      `key_id is required: account ${accountId} has ${live.length === 0 ? 'no' : 'more than one'} unrevoked Live key, so name the key the app is bound to (its plan, domain, scope and limits apply): ${KEYS_HINT}`,
      { field: 'key_id' },
    );
  }
  return live[0].id;
}

async function lockAccount(tx: Kysely<AuthDb>, accountId: string): Promise<void> {
  await accountExists(tx, accountId, true);
}

async function accountExists(db: Kysely<AuthDb>, accountId: string, lock = false): Promise<void> {
  const query = db.selectFrom('accounts').select('id').where('id', '=', accountId);
  const row = await (lock ? query.forUpdate() : query).executeTakeFirst();
  if (!row) {
    throw new HeraldError('not_found', `account ${accountId} does not exist: ${ACCOUNT_HINT}`, {
      field: 'account',
    });
  }
}

function noApp(appId: string): HeraldError {
  return new HeraldError(
    'not_found',
    `app_id ${appId} is not a Pusher app of this account: ${APPS_HINT}`,
    { field: 'app_id' },
  );
}

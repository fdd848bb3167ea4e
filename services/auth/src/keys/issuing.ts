import type { SecretBox } from '@herald/kit';
import { HeraldError, type PlanCatalogue } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { AuthDb } from '../db-schema.js';
import { parseId } from '../ids.js';
import { findSubscription, liveKeyStanding } from '../subscriptions.js';
import { type KeyRequest, resolveKeySpec } from './key-spec.js';
import {
  type ApiKeySummary,
  type CreatedApiKey,
  countActiveKeys,
  createApiKey,
  listTestKeys,
  noAccount,
  SUMMARY_COLUMNS,
  testKeyExists,
} from './store.js';

/** Most unrevoked Live keys an account may hold, unless configured otherwise. */
export const DEFAULT_MAX_LIVE_KEYS = 25;

/** What the key rules need: the store, the plan catalogue and the per-account key cap. */
export interface KeyRules {
  db: Kysely<AuthDb>;
  catalogue: PlanCatalogue;
  /** Most unrevoked Live keys per account (MAX_LIVE_KEYS_PER_ACCOUNT). */
  maxLiveKeys: number;
  /** Seals the signing secrets of keys that require tokens (SECRET_ENCRYPTION_KEY); none: refused. */
  box?: SecretBox | undefined;
}

const ACCOUNT_HINT = 'give the id `account create` printed';

/**
 * Issues a key under the plan rules, for the admin CLI and the account API alike:
 * - a Test key only if the account never had one (409 `test_key_exists`: support resets it);
 * - a Live key only on a paid plan whose period has not ended (403 `plan_required`), and only
 *   while the account holds fewer than `maxLiveKeys` unrevoked Live keys (409 `too_many_keys`),
 *   counted under a lock on the account row, so parallel requests cannot pass the cap.
 * The request itself is checked first, so a bad domain is a 400 whatever the plan.
 */
export async function issueKey(
  rules: KeyRules,
  accountId: string,
  request: KeyRequest,
  now: Date = new Date(),
): Promise<CreatedApiKey> {
  const account_id = parseId('account', accountId, ACCOUNT_HINT);
  resolveKeySpec(request, now);
  if (request.kind === 'test') {
    // Revoked ones count too: a Test key is generated once, and only support issues another.
    if ((await listTestKeys(rules.db, account_id)).length > 0) throw testKeyExists(account_id);
    return createApiKey(rules.db, account_id, request, now, rules.box);
  }
  // The account row is locked before the count, so parallel creations count one after another and
  // the cap holds (a count and an insert outside one locked transaction both pass at the cap).
  return rules.db.transaction().execute(async (tx) => {
    await lockAccount(tx, account_id);
    const sub = await findSubscription(tx, account_id);
    if (!sub) throw noAccount(account_id);
    const standing = liveKeyStanding(rules.catalogue, sub, now.getTime());
    if (!standing.active) {
      throw new HeraldError(
        'plan_required',
        `Live keys need an active paid plan, and ${standing.reason}`,
        { field: 'kind' },
      );
    }
    const active = await countActiveKeys(tx, account_id);
    if (active.live >= rules.maxLiveKeys) {
      throw new HeraldError(
        'too_many_keys',
        `the account already holds ${active.live} Live keys, the most allowed (${rules.maxLiveKeys}): revoke one it no longer uses, then create the new one`,
        { field: 'kind' },
      );
    }
    return createApiKey(tx, account_id, request, now, rules.box);
  });
}

/** A reset's outcome: the new Test key and the keys it replaced (revoked now). */
export interface TestKeyReset {
  key: CreatedApiKey;
  revoked: ApiKeySummary[];
}

/**
 * Support's reset of an account's Test key: revokes the current one and issues a new 4-hour key
 * with the same client, domain, scope, inbox, webhook payload, push settings and token choice (a new signing
 * secret, sealed by `box`; a key the token rule covers gets tokens unless it had opted out), in
 * one transaction (the account row is locked, so two resets cannot interleave). The caller
 * broadcasts `reset` for each revoked key. Throws naming `account` when there is no such account
 * or it never had a Test key.
 */
export async function resetTestKey(
  db: Kysely<AuthDb>,
  accountId: string,
  now: Date = new Date(),
  box?: SecretBox,
): Promise<TestKeyReset> {
  const account_id = parseId('account', accountId, ACCOUNT_HINT);
  return db.transaction().execute(async (tx) => {
    await lockAccount(tx, account_id);
    const [latest] = await listTestKeys(tx, account_id);
    if (!latest) {
      throw new HeraldError(
        'not_found',
        `account ${account_id} has no Test key to reset: it can generate its first one itself (\`key create --kind test\` or POST /v1/keys/test)`,
        { field: 'account' },
      );
    }
    const revoked = await tx
      .updateTable('api_keys')
      .set({ revoked_at: now })
      .where('account_id', '=', account_id)
      .where('kind', '=', 'test')
      .where('revoked_at', 'is', null)
      .returning(SUMMARY_COLUMNS)
      .execute();
    const key = await createApiKey(
      tx,
      account_id,
      {
        kind: 'test',
        client: latest.client,
        domain: latest.domain ?? undefined,
        scope: latest.scope,
        // Left out unless on: a web inbox key made before tokens were its default gets them now
        // (the reset's output shows the secret), unless it was made with the opt-out.
        require_token: latest.require_token || undefined,
        allow_unsigned_recipients: latest.allow_unsigned_recipients,
        inbox_days: latest.inbox_days,
        webhook_payload: latest.webhook_payload,
        push_after_ms: latest.push_after_ms ?? undefined,
        push_ttl_s: latest.push_ttl_s ?? undefined,
        push_title: latest.push_title ?? undefined,
        push_body: latest.push_body ?? undefined,
        push_include_payload: latest.push_include_payload ?? undefined,
      },
      now,
      box,
    );
    return { key, revoked };
  });
}

/**
 * Locks the account's row until the transaction ends, so key changes of one account run one after
 * another; throws naming `account` when there is no such account.
 */
async function lockAccount(tx: Kysely<AuthDb>, accountId: string): Promise<void> {
  const account = await tx
    .selectFrom('accounts')
    .select('id')
    .where('id', '=', accountId)
    .forUpdate()
    .executeTakeFirst();
  if (!account) throw noAccount(accountId);
}

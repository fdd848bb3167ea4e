import { digestsEqual } from '@herald/kit';
import type { AuthVerifyReply, PlanCatalogue, VerifiedKey } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { AuthDb } from './db-schema.js';
import { findPlan } from './plan-catalogue.js';
import { DEFAULT_PLAN, liveKeyStanding } from './subscriptions.js';

/** The outcomes a lookup can produce (a database failure is the responder's `internal`). */
export type VerificationResult =
  | 'ok'
  | 'invalid_api_key'
  | 'key_revoked'
  | 'key_expired'
  | 'plan_inactive';

export interface Verification {
  result: VerificationResult;
  reply: AuthVerifyReply;
}

/** What verification reads: the store and the plan catalogue. */
export interface VerificationDeps {
  db: Kysely<AuthDb>;
  catalogue: PlanCatalogue;
}

const NEW_KEY =
  'create a new key (admin CLI: `key create --account ID --kind live|test --client web|mobile`)';

/**
 * Decides what a key hash is worth right now: a verified key with its plan, plan end and limits,
 * or the refusal to return with a message saying how to fix it. Revocation wins over expiry
 * because it is the more final answer; a Live key is then refused `plan_inactive` unless its
 * account is on a paid plan whose period has not ended. `now` is epoch ms. Database errors
 * propagate.
 */
export async function verifyKeyHash(
  deps: VerificationDeps,
  keyHash: string,
  now: number,
): Promise<Verification> {
  // One indexed lookup: the key and its account's subscription together.
  const row = await deps.db
    .selectFrom('api_keys')
    .leftJoin('subscriptions', 'subscriptions.account_id', 'api_keys.account_id')
    .selectAll('api_keys')
    .select(['subscriptions.plan', 'subscriptions.period_end'])
    .where('api_keys.key_hash', '=', keyHash)
    .executeTakeFirst();
  // The lookup already matched on the hash; the constant-time re-check keeps the decision from
  // resting on how the database compared strings.
  if (!row || !digestsEqual(row.key_hash, keyHash)) {
    return refuse(
      'invalid_api_key',
      `api_key is not a Herald key: check it was copied whole (keys start with hk_live_ or hk_test_), or ${NEW_KEY}`,
    );
  }
  if (row.revoked_at !== null) {
    return refuse('key_revoked', `api_key was revoked: ${NEW_KEY} and use it instead`);
  }
  const expiresAt = row.expires_at === null ? null : row.expires_at.getTime();
  if (expiresAt !== null && now >= expiresAt) {
    return refuse(
      'key_expired',
      `api_key expired at ${new Date(expiresAt).toISOString()} (test keys last 4 hours): ${NEW_KEY}`,
    );
  }
  const sub = { plan: row.plan ?? DEFAULT_PLAN, period_end: row.period_end ?? null };
  if (row.kind === 'live') {
    const standing = liveKeyStanding(deps.catalogue, sub, now);
    if (!standing.active) {
      return refuse('plan_inactive', `api_key is a Live key, and ${standing.reason}`);
    }
  }
  const plan = findPlan(deps.catalogue, sub.plan);
  const key: VerifiedKey = {
    id: row.id,
    account_id: row.account_id,
    kind: row.kind,
    client: row.client,
    domain: row.domain,
    expires_at: expiresAt,
    plan: sub.plan,
    plan_until: sub.period_end === null ? null : sub.period_end.getTime(),
    // A Test key has its own limits whatever the plan; a Live key reaching here has a plan.
    limits:
      row.kind === 'test' || plan === undefined ? deps.catalogue.test_key_limits : plan.limits,
  };
  return { result: 'ok', reply: { v: 1, ok: true, key } };
}

function refuse(code: Exclude<VerificationResult, 'ok'>, message: string): Verification {
  return { result: code, reply: { v: 1, ok: false, error: { code, message } } };
}

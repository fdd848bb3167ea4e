import { digestsEqual } from '@herald/access';
import type { SecretBox } from '@herald/kit';
import {
  type AuthVerifyReply,
  dashboardRecipient,
  errorReply,
  HeraldError,
  type KeyPush,
  type PlanCatalogue,
  type VerifiedKey,
} from '@herald/proto';
import type { Kysely } from 'kysely';
import type { AuthDb } from './db-schema.js';
import { findDashboardKey } from './keys/dashboard-keys.js';
import { keyPushOf } from './keys/push-settings.js';
import { openSigningSecrets } from './keys/signing-secrets.js';
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
  /**
   * DASHBOARD_MAX_CONNECTIONS: the sockets an account's dashboard credentials may hold at once
   * (their own pool at the edge, never the plan's). Default 5.
   */
  dashboardConnections?: number;
  /** Opens the signing secrets of keys that require tokens (SECRET_ENCRYPTION_KEY). */
  box?: SecretBox | undefined;
}

/** Default of {@link VerificationDeps.dashboardConnections}. */
export const DEFAULT_DASHBOARD_CONNECTIONS = 5;

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
  withSecrets = false,
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
  if (!row) return verifyDashboardKey(deps, keyHash, now);
  if (!digestsEqual(row.key_hash, keyHash)) {
    return refuse(
      'invalid_api_key',
      `api_key is not a Herald key: check it was copied whole (keys start with hk_live_ or hk_test_), or ${NEW_KEY}`,
    );
  }
  if (row.revoked_at !== null) {
    return refuse(
      'key_revoked',
      row.kind === 'test'
        ? 'api_key (a Test key) was revoked: get a fresh one with `key reset-test --account ID` (admin CLI; support does it for customers)'
        : `api_key was revoked: ${NEW_KEY} and use it instead`,
    );
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
      return refuse(
        'plan_inactive',
        `api_key is a Live key, which needs an active paid plan, and ${standing.reason}`,
      );
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
    scope: row.scope,
    require_token: row.require_token,
    inbox_days: row.inbox_days,
    webhook_payload: row.webhook_payload,
    // Only a push key carries it: ingress puts it on the event's pending record (proto/push.ts).
    ...withPush(keyPushOf(row)),
    // Only the edge asks: it verifies recipient tokens; nobody else needs a secret.
    ...(row.require_token && withSecrets
      ? { signing_secrets: openSigningSecrets(deps.box, row, now) }
      : {}),
  };
  return { result: 'ok', reply: { v: 1, ok: true, key } };
}

/**
 * A hash no customer key has may be a dashboard credential (dashboard-keys.ts): verified the same
 * way, with the Test key's limits except the connection cap (DASHBOARD_MAX_CONNECTIONS) and its
 * scope, the account's dashboard recipient, for the edge and ingress to enforce.
 */
async function verifyDashboardKey(
  deps: VerificationDeps,
  keyHash: string,
  now: number,
): Promise<Verification> {
  const row = await findDashboardKey(deps.db, keyHash);
  if (!row || !digestsEqual(row.key_hash, keyHash)) {
    return refuse(
      'invalid_api_key',
      `api_key is not a Herald key: check it was copied whole (keys start with hk_live_ or hk_test_), or ${NEW_KEY}`,
    );
  }
  const expiresAt = row.expires_at.getTime();
  if (now >= expiresAt) {
    return refuse(
      'key_expired',
      `api_key (a dashboard credential) expired at ${new Date(expiresAt).toISOString()}: the dashboard asks for a new one (POST /v1/dashboard/listener)`,
    );
  }
  const key: VerifiedKey = {
    id: row.id,
    account_id: row.account_id,
    kind: 'dashboard',
    // A listener is the browser's (its Origin checked when minted from one); a sender is auth's.
    client: row.role === 'listen' ? 'web' : 'mobile',
    dashboard: { role: row.role, recipient: dashboardRecipient(row.account_id) },
    domain: row.domain,
    expires_at: expiresAt,
    plan: row.plan ?? DEFAULT_PLAN,
    plan_until:
      row.period_end === null || row.period_end === undefined ? null : row.period_end.getTime(),
    limits: {
      ...deps.catalogue.test_key_limits,
      connections: deps.dashboardConnections ?? DEFAULT_DASHBOARD_CONNECTIONS,
    },
    scope: row.role === 'listen' ? 'subscribe' : 'dispatch',
  };
  return { result: 'ok', reply: { v: 1, ok: true, key } };
}

function refuse(code: Exclude<VerificationResult, 'ok'>, message: string): Verification {
  return { result: code, reply: errorReply(new HeraldError(code, message)) };
}

/** The verify reply's `push`, present only for a key that pushes. */
function withPush(push: KeyPush | undefined): { push?: KeyPush } {
  return push ? { push } : {};
}

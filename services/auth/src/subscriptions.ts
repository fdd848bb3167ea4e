import { HeraldError, type Plan, type PlanCatalogue } from '@herald/proto';
import type { Kysely } from 'kysely';
import { INSTANT_FORMS, parseInstant } from './dates.js';
import type { AuthDb, SubscriptionRow } from './db-schema.js';
import { parseId } from './ids.js';
import { isPgError, PgCodes } from './pg-errors.js';
import { findPlan, planIds } from './plan-catalogue.js';

/** The plan every new account starts on. */
export const DEFAULT_PLAN = 'free';

/** A validated plan for an account: what `set-plan` and account creation store. */
export interface PlanChange {
  plan: Plan;
  /** When the paid period ends; null for a plan that is not paid (it never lapses). */
  period_end: Date | null;
}

const UNTIL_HINT = `give ${INSTANT_FORMS}`;

/**
 * Checks a plan change against the catalogue. A paid plan needs `until` (when its period ends);
 * a plan that is not paid refuses one, since it never lapses. Throws a {@link HeraldError}
 * naming `plan` (with the valid ids) or `until`.
 */
export function resolvePlanChange(
  catalogue: PlanCatalogue,
  planId: string,
  until: string | Date | undefined,
): PlanChange {
  const plan = findPlan(catalogue, planId);
  if (!plan) {
    throw new HeraldError(
      'invalid_field',
      `plan "${planId}" is not in the plan catalogue: use one of ${planIds(catalogue)}`,
      { field: 'plan' },
    );
  }
  if (!plan.paid) {
    if (until !== undefined) {
      throw new HeraldError(
        'invalid_field',
        `until is only for paid plans: the ${plan.id} plan never lapses, so drop --until`,
        { field: 'until' },
      );
    }
    return { plan, period_end: null };
  }
  if (until === undefined || until === '') {
    throw new HeraldError(
      'missing_field',
      `until is required for the paid ${plan.id} plan: ${UNTIL_HINT}, when the paid period ends`,
      { field: 'until' },
    );
  }
  return { plan, period_end: until instanceof Date ? until : parseUntil(until) };
}

/** Parses `--until`: an ISO 8601 date or date-time with zone, refusing dates that do not exist. */
export function parseUntil(value: string): Date {
  return parseInstant(value, 'until', UNTIL_HINT);
}

/** The account's subscription, or undefined when the account does not exist. */
export async function findSubscription(
  db: Kysely<AuthDb>,
  accountId: string,
): Promise<SubscriptionRow | undefined> {
  const account_id = parseId('account', accountId, 'give the id `account create` printed');
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('account_id', '=', account_id)
    .executeTakeFirst();
}

/**
 * Stores the account's plan and period end. Callers broadcast `plan_changed` afterwards (see
 * invalidation.ts) so cached verifications follow at once. Throws naming `account` when there is
 * no such account.
 */
export async function setSubscription(
  db: Kysely<AuthDb>,
  accountId: string,
  change: PlanChange,
  now: Date = new Date(),
): Promise<SubscriptionRow> {
  const account_id = parseId('account', accountId, 'give the id `account create` printed');
  const values = { plan: change.plan.id, period_end: change.period_end, updated_at: now };
  try {
    return await db
      .insertInto('subscriptions')
      .values({ account_id, ...values })
      .onConflict((oc) => oc.column('account_id').doUpdateSet(values))
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (err) {
    if (isPgError(err, PgCodes.foreignKeyViolation)) {
      throw new HeraldError(
        'not_found',
        `account ${account_id} does not exist: give the id \`account create\` printed`,
        { field: 'account' },
      );
    }
    throw err;
  }
}

/** Where a subscription stands at `now` (epoch ms). */
export type PlanStanding =
  | { active: true; plan: Plan }
  | { active: false; plan: Plan | undefined; reason: string };

/**
 * Whether the account may use Live keys now: a paid plan of the catalogue whose period has not
 * ended. The reason says what is wrong and how to fix it, for `plan_required` / `plan_inactive`:
 * a clause that follows "Live keys need an active paid plan, and", so it never says that again.
 */
export function liveKeyStanding(
  catalogue: PlanCatalogue,
  sub: Pick<SubscriptionRow, 'plan' | 'period_end'> | undefined,
  now: number,
): PlanStanding {
  const planId = sub?.plan ?? DEFAULT_PLAN;
  const plan = findPlan(catalogue, planId);
  const renew = 'renew the subscription to use Live keys again';
  if (!plan) {
    return {
      active: false,
      plan,
      reason: `the account's plan "${planId}" is no longer offered: move to one of ${planIds(catalogue)}`,
    };
  }
  if (!plan.paid) {
    const paid = catalogue.plans.filter((p) => p.paid).map((p) => p.name);
    const named = plan.name.toLowerCase() === plan.id ? plan.name : `${plan.name} (${plan.id})`;
    return {
      active: false,
      plan,
      reason: `the account is on the ${named} plan: move to ${paid.join(' or ') || 'a paid plan'}, or use the Test key`,
    };
  }
  const end = sub?.period_end ?? null;
  if (end === null || now >= end.getTime()) {
    return {
      active: false,
      plan,
      reason:
        end === null
          ? `the ${plan.name} plan has no paid period on record: ${renew}`
          : `the ${plan.name} plan lapsed at ${end.toISOString()}: ${renew}`,
    };
  }
  return { active: true, plan };
}

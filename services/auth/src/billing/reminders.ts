import type { PlanCatalogue } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { AuthDb } from '../db-schema.js';

export interface DueReminder {
  account_id: string;
  plan: string;
  period_end: Date;
}

/**
 * Claims the reminders due now: paid subscriptions ending within `windowMs` that have not had
 * one for this period end. The insert is the claim, so two auth instances never both send one.
 */
export async function claimDueReminders(
  db: Kysely<AuthDb>,
  catalogue: PlanCatalogue,
  now: Date,
  windowMs: number,
  limit: number,
): Promise<DueReminder[]> {
  const paid = catalogue.plans.filter((p) => p.paid).map((p) => p.id);
  if (paid.length === 0) return [];
  const due = await db
    .selectFrom('subscriptions as s')
    .select(['s.account_id', 's.plan', 's.period_end'])
    .where('s.plan', 'in', paid)
    .where('s.period_end', '>', now)
    .where('s.period_end', '<=', new Date(now.getTime() + windowMs))
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('renewal_reminders as r')
            .select('r.account_id')
            .whereRef('r.account_id', '=', 's.account_id')
            .whereRef('r.period_end', '=', 's.period_end'),
        ),
      ),
    )
    .limit(limit)
    .execute();
  const claimed: DueReminder[] = [];
  for (const row of due) {
    if (row.period_end === null) continue;
    const inserted = await db
      .insertInto('renewal_reminders')
      .values({ account_id: row.account_id, period_end: row.period_end, sent_at: now })
      .onConflict((oc) => oc.doNothing())
      .returning('account_id')
      .executeTakeFirst();
    if (inserted)
      claimed.push({ account_id: row.account_id, plan: row.plan, period_end: row.period_end });
  }
  return claimed;
}

/** What the dashboard shows about renewing: when the period ends and whether to remind now. */
export function renewalView(
  sub: { plan: string; period_end: Date | null } | undefined,
  paidPlan: boolean,
  now: number,
  windowMs: number,
) {
  const end = sub?.period_end ?? null;
  if (!paidPlan || end === null) {
    return { period_end: null, remind_from: null, reminder_due: false, lapsed: false };
  }
  const remindFrom = new Date(end.getTime() - windowMs);
  return {
    period_end: end.toISOString(),
    remind_from: remindFrom.toISOString(),
    reminder_due: now >= remindFrom.getTime() && now < end.getTime(),
    lapsed: now >= end.getTime(),
  };
}

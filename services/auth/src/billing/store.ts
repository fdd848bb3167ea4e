import type { PaymentStatus, PlanCatalogue } from '@herald/proto';
import type { Kysely, Transaction } from 'kysely';
import type { AuthDb, PaymentEventRow, PaymentRow } from '../db-schema.js';
import { findPlan } from '../plan-catalogue.js';
import { paidPeriodEnd } from './period.js';

/** One line of the audit trail, as written. */
export interface AuditEntry {
  actor: string;
  action: string;
  resultCode?: string | null;
  receipt?: string | null;
  detail?: string | null;
}

export type NewPayment = Pick<
  PaymentRow,
  | 'account_id'
  | 'plan'
  | 'provider'
  | 'currency'
  | 'amount_minor'
  | 'phone'
  | 'callback_token_hash'
  | 'created_by'
  | 'created_at'
  | 'expires_at'
  | 'next_query_at'
>;

type Db = Kysely<AuthDb> | Transaction<AuthDb>;

export async function insertPayment(db: Kysely<AuthDb>, payment: NewPayment): Promise<PaymentRow> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('payments')
      .values(payment)
      .returningAll()
      .executeTakeFirstOrThrow();
    await appendEvent(trx, row, payment.created_at, {
      actor: payment.created_by,
      action: 'created',
      detail: `${row.plan} plan, ${row.currency} ${row.amount_minor / 100}`,
    });
    return row;
  });
}

export async function appendEvent(
  db: Db,
  payment: Pick<PaymentRow, 'id' | 'status'>,
  at: Date,
  entry: AuditEntry,
): Promise<void> {
  await db
    .insertInto('payment_events')
    .values({
      payment_id: payment.id,
      at,
      actor: entry.actor,
      action: entry.action,
      status: payment.status,
      result_code: entry.resultCode ?? null,
      receipt: entry.receipt ?? null,
      detail: entry.detail ?? null,
    })
    .execute();
}

export async function findPayment(db: Db, id: string): Promise<PaymentRow | undefined> {
  return db.selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listPayments(
  db: Kysely<AuthDb>,
  accountId: string,
  limit: number,
): Promise<PaymentRow[]> {
  return db
    .selectFrom('payments')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute();
}

export async function paymentEvents(db: Kysely<AuthDb>, id: string): Promise<PaymentEventRow[]> {
  return db
    .selectFrom('payment_events')
    .selectAll()
    .where('payment_id', '=', id)
    .orderBy('id')
    .execute();
}

/** Records that the provider accepted the request (only while the payment is still pending). */
export async function markInitiated(
  db: Kysely<AuthDb>,
  payment: PaymentRow,
  refs: { providerRef: string; merchantRef: string | null },
  at: Date,
  actor: string,
): Promise<PaymentRow> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('payments')
      .set({ provider_ref: refs.providerRef, merchant_ref: refs.merchantRef })
      .where('id', '=', payment.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await appendEvent(trx, row, at, {
      actor,
      action: 'initiated',
      detail: `prompt sent, provider ref ${refs.providerRef}`,
    });
    return row;
  });
}

export async function scheduleNextQuery(db: Kysely<AuthDb>, id: string, at: Date): Promise<void> {
  await db
    .updateTable('payments')
    .set({ next_query_at: at })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
}

export interface Settlement {
  outcome: Exclude<PaymentStatus, 'pending'>;
  resultCode: string | null;
  reason: string | null;
  receipt: string | null;
  actor: string;
  detail: string;
}

/**
 * Moves a pending payment to its outcome, once: the UPDATE only matches while the status is
 * still `pending`, so whichever of the callbacks, queries and timeouts comes first wins and
 * every later one changes nothing (resolves undefined). A success starts or extends the
 * subscription by one month in the same transaction (`paidPeriodEnd`): the same plan from the
 * current period's end while it runs, another paid plan from now with the unused time of the
 * running one converted at the price ratio, else from now.
 */
export async function settlePayment(
  db: Kysely<AuthDb>,
  catalogue: PlanCatalogue,
  id: string,
  settlement: Settlement,
  now: Date,
): Promise<PaymentRow | undefined> {
  return db.transaction().execute(async (trx) => {
    let row = await trx
      .updateTable('payments')
      .set({
        status: settlement.outcome,
        settled_at: now,
        result_code: settlement.resultCode,
        reason: settlement.reason,
        receipt: settlement.receipt,
      })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .returningAll()
      .executeTakeFirst();
    if (!row) return undefined;
    await appendEvent(trx, row, now, {
      actor: settlement.actor,
      action: settlement.outcome,
      resultCode: settlement.resultCode,
      receipt: settlement.receipt,
      detail: settlement.detail,
    });
    if (settlement.outcome !== 'succeeded') return row;

    // Locked so two successes of one account (one after another) each add their month.
    const sub = await trx
      .selectFrom('subscriptions')
      .selectAll()
      .where('account_id', '=', row.account_id)
      .forUpdate()
      .executeTakeFirst();
    // The plan as paid for: a plan taken out of the catalogue while its payment was pending still
    // gets its month, priced at what was paid.
    const bought = findPlan(catalogue, row.plan) ?? {
      id: row.plan,
      paid: true,
      price: { kes: row.amount_minor / 100 },
    };
    const periodEnd = paidPeriodEnd(
      { plan: sub ? findPlan(catalogue, sub.plan) : undefined, end: sub?.period_end ?? null },
      bought,
      now,
    );
    const values = { plan: row.plan, period_end: periodEnd, updated_at: now };
    await trx
      .insertInto('subscriptions')
      .values({ account_id: row.account_id, ...values })
      .onConflict((oc) => oc.column('account_id').doUpdateSet(values))
      .execute();
    row = await trx
      .updateTable('payments')
      .set({ period_end: periodEnd })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await appendEvent(trx, row, now, {
      actor: settlement.actor,
      action: 'subscription_extended',
      detail: `${row.plan} plan paid until ${periodEnd.toISOString()} (was ${sub?.plan ?? 'none'}${
        sub?.period_end ? ` until ${sub.period_end.toISOString()}` : ''
      })`,
    });
    return row;
  });
}

/** Pending payments whose next query is due, oldest first. */
export async function duePayments(
  db: Kysely<AuthDb>,
  now: Date,
  limit: number,
): Promise<PaymentRow[]> {
  return db
    .selectFrom('payments')
    .selectAll()
    .where('status', '=', 'pending')
    .where('next_query_at', '<=', now)
    .orderBy('next_query_at')
    .limit(limit)
    .execute();
}

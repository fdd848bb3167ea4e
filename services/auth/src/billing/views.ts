import { maskPhone } from '@herald/payments';
import { iso } from '../dates.js';
import type { PaymentEventRow, PaymentRow } from '../db-schema.js';

/** A payment as the account API and the admin tool show it: never its callback token. */
export function paymentView(p: PaymentRow) {
  return {
    id: p.id,
    account_id: p.account_id,
    plan: p.plan,
    status: p.status,
    provider: p.provider,
    amount: { currency: p.currency, minor: p.amount_minor, major: p.amount_minor / 100 },
    phone: maskPhone(p.phone),
    provider_ref: p.provider_ref,
    receipt: p.receipt,
    result_code: p.result_code,
    reason: p.reason,
    created_by: p.created_by,
    created_at: iso(p.created_at),
    expires_at: iso(p.expires_at),
    settled_at: iso(p.settled_at),
    period_end: iso(p.period_end),
  };
}

/** One audit-trail line. */
export function eventView(e: PaymentEventRow) {
  return {
    at: iso(e.at),
    actor: e.actor,
    action: e.action,
    status: e.status,
    result_code: e.result_code,
    receipt: e.receipt,
    detail: e.detail,
  };
}

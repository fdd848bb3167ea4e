import {
  BillingNotice,
  billingSubjects,
  type PaymentNotice,
  type RenewalReminder,
} from '@herald/proto';
import { JSONCodec, type NatsConnection } from 'nats';
import { iso } from '../dates.js';
import type { PaymentRow } from '../db-schema.js';
import type { NoticeForwarder } from './dashboard-dispatch.js';

const codec = JSONCodec<BillingNotice>();

/**
 * Announces a billing notice on the account's billing subject, and hands it to `forwarder` (the
 * dispatch to the account's dashboard recipient, dashboard-dispatch.ts). Fire-and-forget: the
 * database is the truth and the dashboard re-reads it, so a lost notice only delays what the page
 * shows (it polls while its socket is down).
 */
export function publishNotice(
  nc: NatsConnection,
  notice: BillingNotice,
  forwarder?: NoticeForwarder,
): void {
  const parsed = BillingNotice.parse(notice);
  nc.publish(billingSubjects.notice(notice.account_id), codec.encode(parsed));
  forwarder?.forward(parsed);
}

export function paymentNotice(payment: PaymentRow, at: number): PaymentNotice {
  return {
    v: 1,
    type: 'payment',
    account_id: payment.account_id,
    payment_id: payment.id,
    plan: payment.plan,
    status: payment.status,
    reason: payment.reason,
    period_end: iso(payment.period_end),
    at,
  };
}

export function reminderNotice(
  accountId: string,
  plan: string,
  periodEnd: Date,
  at: number,
): RenewalReminder {
  return {
    v: 1,
    type: 'renewal_reminder',
    account_id: accountId,
    plan,
    period_end: periodEnd.toISOString(),
    at,
  };
}

/**
 * Billing notices: what auth announces about an account's payments and renewals, for the
 * dashboard to show live. Never carries a phone number, a receipt or a callback token.
 */
import { z } from 'zod';
import { assertToken } from './subjects.js';

export const PaymentStatus = z.enum(['pending', 'succeeded', 'failed', 'cancelled', 'timed_out']);
export type PaymentStatus = z.infer<typeof PaymentStatus>;

export const PaymentNotice = z.object({
  v: z.literal(1),
  type: z.literal('payment'),
  account_id: z.string(),
  payment_id: z.string(),
  plan: z.string(),
  status: PaymentStatus,
  /** Why it did not succeed, in words the user can act on. */
  reason: z.string().nullable(),
  /** On success: the end of the paid period it bought (ISO 8601). */
  period_end: z.string().nullable(),
  /** Epoch ms. */
  at: z.number().int(),
});
export type PaymentNotice = z.infer<typeof PaymentNotice>;

export const RenewalReminder = z.object({
  v: z.literal(1),
  type: z.literal('renewal_reminder'),
  account_id: z.string(),
  plan: z.string(),
  /** When the paid period ends unless renewed (ISO 8601). */
  period_end: z.string(),
  at: z.number().int(),
});
export type RenewalReminder = z.infer<typeof RenewalReminder>;

export const BillingNotice = z.discriminatedUnion('type', [PaymentNotice, RenewalReminder]);
export type BillingNotice = z.infer<typeof BillingNotice>;

export const billingSubjects = {
  /** Core publish: an account's billing notices. */
  notice: (account: string) => `rt.billing.${assertToken('account', account)}`,
  /** Every account's notices (what a forwarder subscribes to). */
  noticeAll: 'rt.billing.*',
} as const;

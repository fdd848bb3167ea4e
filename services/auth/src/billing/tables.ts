import type { PaymentStatus } from '@herald/proto';
import type { ColumnType, Generated, Selectable } from 'kysely';

/** One attempt to pay for a plan (migration 0005_billing). */
export interface PaymentsTable {
  id: Generated<string>;
  account_id: string;
  plan: string;
  /** The PaymentProvider's name: `mpesa`. */
  provider: string;
  /** ISO 4217: `KES`. */
  currency: string;
  /** Integer minor units (cents): KES 1,200 is 120000. */
  amount_minor: number;
  /** Normalised MSISDN, 2547XXXXXXXX. */
  phone: string;
  status: ColumnType<PaymentStatus, PaymentStatus | undefined, PaymentStatus>;
  /** SHA-256 hex of the callback URL's secret token. */
  callback_token_hash: string;
  provider_ref: string | null;
  merchant_ref: string | null;
  receipt: string | null;
  result_code: string | null;
  reason: string | null;
  /** Who started it: `account:<id>` (dashboard) or `admin:<user>` (admin CLI). */
  created_by: string;
  created_at: Date;
  /** A payment still pending then is timed out. */
  expires_at: Date;
  /** When the scheduler next asks the provider about it. */
  next_query_at: Date;
  settled_at: Date | null;
  /** On success: the paid period end it bought. */
  period_end: Date | null;
}

/** The audit trail: one row per thing that happened to a payment. */
export interface PaymentEventsTable {
  id: Generated<string>;
  payment_id: string;
  at: Date;
  /** `account:<id>`, `admin:<user>`, `provider:callback`, `provider:query`, `scheduler`. */
  actor: string;
  action: string;
  /** The payment's status after this event. */
  status: PaymentStatus;
  result_code: string | null;
  receipt: string | null;
  /** Log-safe words: never a token, never a full phone number. */
  detail: string | null;
}

export interface RenewalRemindersTable {
  account_id: string;
  period_end: Date;
  sent_at: Date;
}

export type PaymentRow = Selectable<PaymentsTable>;
export type PaymentEventRow = Selectable<PaymentEventsTable>;

import { envInt } from '@herald/kit';
import { DARAJA_SANDBOX_URL, type DarajaClientOptions, TransactionType } from '@herald/payments';
import { z } from 'zod';

const HttpsUrl = z
  .string()
  .trim()
  .regex(
    /^https:\/\/[^\s/?#]+(\/[^\s?#]*)?$/,
    'must be an https URL with no query, such as https://auth.example.com',
  );

/**
 * Billing's variables, merged into auth's Env. Billing is off unless BILLING_PROVIDER=mpesa;
 * then the MPESA_* credentials and BILLING_CALLBACK_URL are required (see docs/operations.md).
 */
export const BillingEnvShape = {
  /** `mpesa` to take payments by M-Pesa Express; `none` (default) leaves plans to the admin tool. */
  BILLING_PROVIDER: z.enum(['none', 'mpesa']).default('none'),
  /**
   * The public https base URL Daraja posts results to: this auth service as the internet reaches
   * it. Each payment's callback is `<this>/v1/billing/callbacks/<payment>/<secret token>`.
   */
  BILLING_CALLBACK_URL: HttpsUrl.optional(),
  /** Daraja's base URL: sandbox (default), https://api.safaricom.co.ke, or the local simulator. */
  MPESA_BASE_URL: z
    .string()
    .trim()
    .regex(/^https?:\/\/\S+$/, 'must be a URL such as https://api.safaricom.co.ke')
    .default(DARAJA_SANDBOX_URL),
  /** The Daraja app's consumer key and secret (OAuth client credentials). */
  MPESA_CONSUMER_KEY: z.string().min(1).optional(),
  MPESA_CONSUMER_SECRET: z.string().min(1).optional(),
  /** The paybill or till number the STK push is made for (BusinessShortCode). */
  MPESA_SHORTCODE: z
    .string()
    .regex(/^\d{5,7}$/, 'must be the 5 to 7 digit paybill or till number')
    .optional(),
  /** The Lipa na M-Pesa Online passkey of that shortcode. */
  MPESA_PASSKEY: z.string().min(1).optional(),
  /** Who receives the money (PartyB). Default: MPESA_SHORTCODE. */
  MPESA_PARTY_B: z
    .string()
    .regex(/^\d{5,7}$/, 'must be a 5 to 7 digit paybill or till number')
    .optional(),
  /** CustomerPayBillOnline (default, a paybill) or CustomerBuyGoodsOnline (a till). */
  MPESA_TRANSACTION_TYPE: TransactionType.default('CustomerPayBillOnline'),
  /** Most time one Daraja call may take, ms. Default 15000. */
  MPESA_TIMEOUT_MS: envInt(15_000, 1000, 120_000),
  /** A payment with no result after this long is timed out, ms. Default 180000 (3 minutes). */
  PAYMENT_TIMEOUT_MS: envInt(180_000, 1000, 3600_000),
  /** How often a pending payment is queried when no callback came, ms. Default 15000. */
  PAYMENT_QUERY_INTERVAL_MS: envInt(15_000, 100, 600_000),
  /** How often the billing scheduler runs (queries, timeouts, reminders), ms. Default 5000. */
  BILLING_SWEEP_INTERVAL_MS: envInt(5000, 100, 3600_000),
  /** How long before a paid period ends the renewal reminder goes, ms. Default 7 days. */
  RENEWAL_REMINDER_MS: envInt(7 * 24 * 3600_000, 60_000, 60 * 24 * 3600_000),
};

/** Billing's variables parsed: auth's whole Env is one. */
export const BillingEnv = z.object(BillingEnvShape);
export type BillingEnv = z.infer<typeof BillingEnv>;

const REQUIRED_FOR_MPESA = [
  'BILLING_CALLBACK_URL',
  'MPESA_CONSUMER_KEY',
  'MPESA_CONSUMER_SECRET',
  'MPESA_SHORTCODE',
  'MPESA_PASSKEY',
] as const;

/** With BILLING_PROVIDER=mpesa, every credential must be set (each missing one is named). */
export function requireBillingSettings(env: BillingEnv, ctx: z.RefinementCtx): void {
  if (env.BILLING_PROVIDER !== 'mpesa') return;
  for (const name of REQUIRED_FOR_MPESA) {
    if (env[name] === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `is required when BILLING_PROVIDER=mpesa (see docs/operations.md, "Billing")`,
      });
    }
  }
}

/** What the billing service runs with. */
export interface BillingSettings {
  callbackBaseUrl: string;
  paymentTimeoutMs: number;
  queryIntervalMs: number;
  sweepIntervalMs: number;
  reminderMs: number;
}

/** The M-Pesa client options and billing settings, or undefined when billing is off. */
export function billingFromEnv(
  env: BillingEnv,
): { daraja: DarajaClientOptions; settings: BillingSettings } | undefined {
  if (env.BILLING_PROVIDER !== 'mpesa') return undefined;
  const { BILLING_CALLBACK_URL, MPESA_CONSUMER_KEY, MPESA_CONSUMER_SECRET, MPESA_SHORTCODE } = env;
  if (!BILLING_CALLBACK_URL || !MPESA_CONSUMER_KEY || !MPESA_CONSUMER_SECRET || !MPESA_SHORTCODE) {
    return undefined;
  }
  return {
    daraja: {
      baseUrl: env.MPESA_BASE_URL,
      consumerKey: MPESA_CONSUMER_KEY,
      consumerSecret: MPESA_CONSUMER_SECRET,
      shortcode: MPESA_SHORTCODE,
      passkey: env.MPESA_PASSKEY ?? '',
      partyB: env.MPESA_PARTY_B ?? MPESA_SHORTCODE,
      transactionType: env.MPESA_TRANSACTION_TYPE,
      timeoutMs: env.MPESA_TIMEOUT_MS,
    },
    settings: {
      callbackBaseUrl: BILLING_CALLBACK_URL.replace(/\/+$/, ''),
      paymentTimeoutMs: env.PAYMENT_TIMEOUT_MS,
      queryIntervalMs: env.PAYMENT_QUERY_INTERVAL_MS,
      sweepIntervalMs: env.BILLING_SWEEP_INTERVAL_MS,
      reminderMs: env.RENEWAL_REMINDER_MS,
    },
  };
}

/** Parses billing's variables alone (the admin CLI, which does not load all of auth's Env). */
export function parseBillingEnv(env: Record<string, string | undefined>): BillingEnv {
  const parsed = BillingEnv.superRefine(requireBillingSettings).safeParse(env);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new Error(
    `${issue?.path.join('.') || 'billing settings'} ${issue?.message ?? 'is invalid'}`,
  );
}

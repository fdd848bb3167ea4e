/**
 * The provider interface every mobile-money rail implements (M-Pesa first; MTN MoMo or Airtel
 * Money later). A payment is initiated (the customer gets a prompt on their phone) and is then
 * pending until a callback or a status query says how it ended. The caller owns the state
 * machine; a provider only translates its rail's messages into these types.
 */

/** How a payment can end. Once a payment has an outcome it never changes. */
export type PaymentOutcome = 'succeeded' | 'failed' | 'cancelled' | 'timed_out';

/** Every state a payment can be in: `pending` until exactly one outcome. */
export type PaymentStatus = 'pending' | PaymentOutcome;

export const PAYMENT_OUTCOMES: readonly PaymentOutcome[] = [
  'succeeded',
  'failed',
  'cancelled',
  'timed_out',
];

/** What to charge. */
export interface InitiateRequest {
  /** Whole units of the provider's currency (Daraja takes whole shillings). */
  amount: number;
  /** Normalised MSISDN (see phone.ts), e.g. 254708374149. */
  phone: string;
  /** Shown to the customer and on the statement; providers truncate to their limits. */
  reference: string;
  description: string;
  /** Where the provider posts the result: https, carrying the payment's secret token. */
  callbackUrl: string;
}

/** The provider accepted the request: the prompt is on its way and the payment is pending. */
export interface Initiated {
  status: 'pending';
  /** The provider's id for this payment (Daraja: CheckoutRequestID); used to query it. */
  providerRef: string;
  /** A second id some rails give (Daraja: MerchantRequestID); kept for support. */
  merchantRef?: string;
}

/** A result as a provider reports it, by callback or by query. */
export type ProviderResult =
  | { status: 'pending'; detail: string }
  | {
      status: PaymentOutcome;
      /** The rail's own code, as text (Daraja ResultCode), for the audit trail. */
      code: string;
      /** Why it did not succeed, in words a user can act on; undefined on success. */
      reason?: string;
    };

/** A callback, checked for shape and read. Amount, phone and receipt come only with success. */
export interface CallbackResult {
  providerRef: string;
  result: Exclude<ProviderResult, { status: 'pending' }>;
  /** Whole units, as the rail reports them. */
  amount?: number;
  phone?: string;
  /** The rail's receipt number (Daraja MpesaReceiptNumber). */
  receipt?: string;
}

/** A provider call failed (network, credentials, refused request): the message is log-safe. */
export class ProviderError extends Error {
  /** True when retrying later may work (network, 5xx); false when the request itself is wrong. */
  readonly retryable: boolean;
  constructor(message: string, opts: { retryable: boolean; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ProviderError';
    this.retryable = opts.retryable;
  }
}

/** A callback body that is not what the provider sends; the message names what is wrong. */
export class CallbackError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CallbackError';
  }
}

export interface PaymentProvider {
  /** A short stable name stored with each payment: `mpesa`. */
  readonly name: string;
  /** The currency its amounts are in (ISO 4217): `KES`. */
  readonly currency: string;
  /** Sends the prompt. Throws {@link ProviderError}. */
  initiate(request: InitiateRequest): Promise<Initiated>;
  /** Asks how a payment stands now. Throws {@link ProviderError}. */
  query(providerRef: string): Promise<ProviderResult>;
  /**
   * Checks a callback body's shape and reads it. Throws {@link CallbackError}. The callback is a
   * hint, never proof: the caller authenticates the URL and confirms with {@link query}.
   */
  verifyCallback(body: unknown): CallbackResult;
  /** A user-facing reason for one of the rail's result codes (and its own description). */
  failureReason(code: string, description?: string): string;
}

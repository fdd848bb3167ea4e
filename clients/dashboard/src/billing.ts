/**
 * What the Plan page needs to know about payments, kept free of React and the DOM so it is unit
 * tested on its own. The server is the authority on every rule here: the phone check only spares
 * a round trip for an obvious typo, and the server's error (naming the field) is what the page
 * shows when the two disagree.
 */

export type PaymentStatus = 'pending' | 'succeeded' | 'failed' | 'cancelled' | 'timed_out';

export interface Payment {
  id: string;
  plan: string;
  status: PaymentStatus;
  amount: { currency: string; minor: number; major: number };
  phone: string;
  receipt: string | null;
  reason: string | null;
  created_at: string;
  expires_at: string | null;
  settled_at: string | null;
  period_end: string | null;
}

export interface Renewal {
  period_end: string | null;
  remind_from: string | null;
  reminder_due: boolean;
  lapsed: boolean;
}

export interface Subscription {
  plan: string | null;
  paid: boolean;
  price: { usd: number; kes: number } | null;
  renewal: Renewal;
  payments_enabled: boolean;
}

/**
 * How often the page re-reads a pending payment while its socket is not live, ms (see
 * docs/architecture-history.md, "Dashboard checkout: live over Herald itself").
 */
export const POLL_MS = 1000;

export const PHONE_FORMS = '07XXXXXXXX, +2547XXXXXXXX or 2547XXXXXXXX';

/** A hint when the input is plainly not one of the accepted forms; undefined when it may be. */
export function phoneHint(input: string): string | undefined {
  const compact = input.trim().replace(/[\s.\-()]/g, '');
  if (compact === '') return `Enter the M-Pesa number to prompt: ${PHONE_FORMS}`;
  if (/^(\+?254|0)7\d{8}$/.test(compact)) return undefined;
  return `That does not look like a Safaricom number: write it as ${PHONE_FORMS}`;
}

export function isSettled(status: PaymentStatus): boolean {
  return status !== 'pending';
}

const UNPAID: Record<Exclude<PaymentStatus, 'pending' | 'succeeded'>, [string, string]> = {
  cancelled: ['Payment cancelled', 'The prompt was cancelled'],
  timed_out: ['Payment timed out', 'The phone did not answer the prompt in time'],
  failed: ['Payment failed', 'M-Pesa refused the payment'],
};

/** Where the payment is, in words, with the provider's reason when it did not pay. */
export function paymentText(p: Pick<Payment, 'status' | 'reason'>, planName: string): string {
  if (p.status === 'pending') {
    return `Waiting for you to confirm the M-Pesa prompt on your phone (enter your PIN) to pay for ${planName}…`;
  }
  if (p.status === 'succeeded') return `Payment succeeded: you are on ${planName}.`;
  const [label, fallback] = UNPAID[p.status];
  const reason = (p.reason ?? fallback).replace(/\.$/, '');
  // A reason that already says what happened ("The payment was cancelled on the phone") is said
  // once, not after a label that repeats it.
  const word = label.replace(/^Payment /, '').toLowerCase();
  return reason.toLowerCase().includes(word)
    ? `${reason}. Your plan is unchanged.`
    : `${label}. ${reason}. Your plan is unchanged.`;
}

/** The newest pending payment, to resume following it after a reload. */
export function pendingPayment(payments: Payment[]): Payment | undefined {
  return payments.find((p) => p.status === 'pending');
}

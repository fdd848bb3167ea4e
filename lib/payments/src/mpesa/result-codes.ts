import type { PaymentOutcome } from '../provider.js';

/**
 * Daraja's STK result codes, as documented and as seen in the sandbox. The text is what a user
 * sees when a payment did not go through, so it says what to do next.
 */
export const ResultCodes = {
  success: '0',
  insufficientFunds: '1',
  pushError: '1001',
  expired: '1019',
  pushUnavailable: '1025',
  cancelledByUser: '1032',
  timedOut: '1037',
  wrongPin: '2001',
} as const;

const REASONS: Record<string, { outcome: PaymentOutcome; reason?: string }> = {
  '0': { outcome: 'succeeded' },
  '1': {
    outcome: 'failed',
    reason: 'The M-Pesa balance is too low for this payment: top up, then try again',
  },
  '1001': {
    outcome: 'failed',
    reason:
      'M-Pesa could not send the prompt because another transaction is in progress on this phone: wait a minute, then try again',
  },
  '1019': {
    outcome: 'timed_out',
    reason: 'The M-Pesa prompt expired before it was answered: try again and enter your PIN',
  },
  '1025': {
    outcome: 'failed',
    reason: 'M-Pesa could not send the prompt to this phone: try again shortly',
  },
  '1032': { outcome: 'cancelled', reason: 'The payment was cancelled on the phone' },
  '1037': {
    outcome: 'timed_out',
    reason:
      'The phone could not be reached or the prompt was not answered in time: check the phone is on and has signal, then try again',
  },
  '2001': {
    outcome: 'failed',
    reason: 'The M-Pesa PIN entered was wrong: try again with the right PIN',
  },
};

/** The outcome and user-facing reason of a result code; unknown codes fail with their text. */
export function mapResultCode(
  code: string | number,
  description?: string,
): { outcome: PaymentOutcome; reason?: string } {
  const known = REASONS[String(code)];
  if (known) return known;
  const text = description?.trim();
  return {
    outcome: 'failed',
    reason: `M-Pesa refused the payment (code ${code}${text ? `: ${text}` : ''}): try again, or contact support quoting the code`,
  };
}

import { ResultCodes } from '../mpesa/result-codes.js';

/**
 * The simulator's test numbers and how each one answers the prompt. Any other valid number
 * succeeds, like Daraja's sandbox test number.
 */
export const TEST_PHONES = {
  /** Daraja's own sandbox test number: pays. */
  succeeds: '254708374149',
  /** Presses Cancel on the prompt (1032). */
  cancelled: '254700000032',
  /** Never answers: the phone is off or out of reach (1037). */
  timesOut: '254700000037',
  /** Not enough money on M-Pesa (1). */
  insufficientFunds: '254700000001',
  /** Enters a wrong PIN (2001). */
  wrongPin: '254700002001',
} as const;

const RESULTS: Record<string, { code: string; desc: string }> = {
  [TEST_PHONES.cancelled]: { code: ResultCodes.cancelledByUser, desc: 'Request cancelled by user' },
  [TEST_PHONES.timesOut]: { code: ResultCodes.timedOut, desc: 'DS timeout user cannot be reached' },
  [TEST_PHONES.insufficientFunds]: {
    code: ResultCodes.insufficientFunds,
    desc: 'The balance is insufficient for the transaction.',
  },
  [TEST_PHONES.wrongPin]: {
    code: ResultCodes.wrongPin,
    desc: 'The initiator information is invalid.',
  },
};

const SUCCESS = {
  code: ResultCodes.success,
  desc: 'The service request is processed successfully.',
};

/** The result code and description Daraja would give for a push to this phone. */
export function resultForPhone(phone: string): { code: string; desc: string } {
  return RESULTS[phone] ?? SUCCESS;
}

/** A description for a result code forced by a test (nextPush). */
export function describeCode(code: string): string {
  if (code === SUCCESS.code) return SUCCESS.desc;
  return Object.values(RESULTS).find((r) => r.code === code)?.desc ?? `Simulated result ${code}`;
}

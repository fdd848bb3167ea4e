import { type CallbackResult, maskPhone, type ProviderResult } from '@herald/payments';
import type { PaymentRow } from '../db-schema.js';
import type { Settlement } from './store.js';

/** The query decides; a contradicting callback or a success that does not match never upgrades. */
export function judgeSettlement(
  payment: PaymentRow,
  result: Exclude<ProviderResult, { status: 'pending' }>,
  cb: CallbackResult | undefined,
): Settlement {
  const actor = cb ? 'provider:callback' : 'provider:query';
  if (cb && cb.result.status !== result.status) {
    return {
      outcome: result.status === 'succeeded' ? 'failed' : result.status,
      resultCode: result.code,
      reason:
        result.status === 'succeeded'
          ? 'M-Pesa sent contradicting answers about this payment, so the plan was not changed: contact support quoting the payment id'
          : (result.reason ?? null),
      receipt: null,
      actor,
      detail: `callback said ${cb.result.status} (${cb.result.code}), query says ${result.status} (${result.code}): the query decides, never an upgrade on a contradiction`,
    };
  }
  if (result.status !== 'succeeded') {
    return {
      outcome: result.status,
      resultCode: result.code,
      reason: result.reason ?? null,
      receipt: null,
      actor,
      detail: `confirmed by query: ${result.status} (${result.code})`,
    };
  }
  const expected = payment.amount_minor / 100;
  const wrongAmount = cb?.amount !== undefined && cb.amount !== expected;
  const wrongPhone = cb?.phone !== undefined && cb.phone !== payment.phone;
  if (wrongAmount || wrongPhone) {
    return {
      outcome: 'failed',
      resultCode: result.code,
      reason:
        'The M-Pesa confirmation does not match this payment, so the plan was not changed: contact support quoting the payment id',
      receipt: cb?.receipt ?? null,
      actor,
      detail: `callback ${wrongAmount ? `amount ${cb?.amount} (expected ${expected})` : ''}${wrongAmount && wrongPhone ? ' and ' : ''}${wrongPhone ? `phone ${maskPhone(cb?.phone ?? '')} (expected ${maskPhone(payment.phone)})` : ''} disagrees with the payment`,
    };
  }
  return {
    outcome: 'succeeded',
    resultCode: result.code,
    reason: null,
    receipt: cb?.receipt ?? null,
    actor,
    detail: cb ? 'callback confirmed by query' : 'confirmed by query (no callback)',
  };
}

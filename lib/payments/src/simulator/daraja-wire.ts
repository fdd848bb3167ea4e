import { randomBytes } from 'node:crypto';
import { darajaTimestamp } from '../mpesa/password.js';
import type { SimPush } from './simulator-types.js';

/** The body Daraja posts: metadata only on success, Balance without a Value as Daraja sends it. */
export function callbackBody(push: SimPush): unknown {
  const base = {
    MerchantRequestID: push.merchantRequestId,
    CheckoutRequestID: push.checkoutRequestId,
    ResultCode: Number(push.resultCode),
    ResultDesc: push.resultDesc,
  };
  if (push.resultCode !== '0') return { Body: { stkCallback: base } };
  return {
    Body: {
      stkCallback: {
        ...base,
        CallbackMetadata: {
          Item: [
            { Name: 'Amount', Value: push.callbackAmount },
            { Name: 'MpesaReceiptNumber', Value: push.receipt },
            { Name: 'Balance' },
            { Name: 'TransactionDate', Value: Number(darajaTimestamp(new Date())) },
            { Name: 'PhoneNumber', Value: Number(push.phone) },
          ],
        },
      },
    },
  };
}

export function randomInt(min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min));
}

/** Ten upper-case letters and digits, like `TK4XA12B3C`. */
export function receiptNumber(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789';
  return Array.from(randomBytes(10), (b) => alphabet[b % alphabet.length]).join('');
}

import { describe, expect, it } from 'vitest';
import { CallbackError } from '../provider.js';
import { MpesaProvider } from './provider.js';

const provider = new MpesaProvider({
  baseUrl: 'http://127.0.0.1:9',
  consumerKey: 'k',
  consumerSecret: 's',
  shortcode: '174379',
  passkey: 'p',
});

function callback(stk: Record<string, unknown>) {
  return {
    Body: {
      stkCallback: { MerchantRequestID: 'm-1', CheckoutRequestID: 'ws_CO_1', ...stk },
    },
  };
}

describe('MpesaProvider.verifyCallback', () => {
  it('reads a success by item name, whatever the order, tolerating items without a Value', () => {
    const read = provider.verifyCallback(
      callback({
        ResultCode: 0,
        ResultDesc: 'The service request is processed successfully.',
        CallbackMetadata: {
          Item: [
            { Name: 'PhoneNumber', Value: 254708374149 },
            { Name: 'Balance' },
            { Name: 'MpesaReceiptNumber', Value: 'NLJ7RT61SV' },
            { Name: 'TransactionDate', Value: 20191219102115 },
            { Name: 'Amount', Value: 1200 },
          ],
        },
      }),
    );
    expect(read).toEqual({
      providerRef: 'ws_CO_1',
      result: { status: 'succeeded', code: '0' },
      amount: 1200,
      phone: '254708374149',
      receipt: 'NLJ7RT61SV',
    });
  });

  it('reads a cancellation, which has no metadata', () => {
    const read = provider.verifyCallback(
      callback({ ResultCode: 1032, ResultDesc: 'Request cancelled by user' }),
    );
    expect(read.result.status).toBe('cancelled');
    expect(read.result).toMatchObject({ code: '1032' });
    expect(read.amount).toBeUndefined();
    expect(read.receipt).toBeUndefined();
  });

  it('leaves amount, phone and receipt undefined when a success lacks them', () => {
    const read = provider.verifyCallback(
      callback({ ResultCode: '0', CallbackMetadata: { Item: [{ Name: 'Amount' }] } }),
    );
    expect(read.result.status).toBe('succeeded');
    expect(read.amount).toBeUndefined();
    expect(read.phone).toBeUndefined();
  });

  it('refuses a body that is not an STK callback, naming what is missing', () => {
    expect(() => provider.verifyCallback({})).toThrow(CallbackError);
    expect(() => provider.verifyCallback({ Body: { stkCallback: {} } })).toThrow(
      /Body\.stkCallback\.MerchantRequestID/,
    );
  });
});

import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { billingFromEnv, parseBillingEnv } from './config.js';

const base = {
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/herald',
  NATS_URL: 'nats://127.0.0.1:4222',
  TLS_DISABLED: 'true',
};
const mpesa = {
  BILLING_PROVIDER: 'mpesa',
  BILLING_CALLBACK_URL: 'https://auth.example.com/',
  MPESA_CONSUMER_KEY: 'ck',
  MPESA_CONSUMER_SECRET: 'cs',
  MPESA_SHORTCODE: '174379',
  MPESA_PASSKEY: 'pk',
};

describe('billing configuration', () => {
  it('is off by default', () => {
    expect(billingFromEnv(loadConfig(base))).toBeUndefined();
  });

  it('reads the M-Pesa settings with their defaults', () => {
    const billing = billingFromEnv(loadConfig({ ...base, ...mpesa }));
    expect(billing?.daraja).toMatchObject({
      baseUrl: 'https://sandbox.safaricom.co.ke',
      shortcode: '174379',
      partyB: '174379',
      transactionType: 'CustomerPayBillOnline',
      timeoutMs: 15_000,
    });
    expect(billing?.settings).toEqual({
      callbackBaseUrl: 'https://auth.example.com',
      paymentTimeoutMs: 180_000,
      queryIntervalMs: 15_000,
      sweepIntervalMs: 5000,
      reminderMs: 7 * 24 * 3600_000,
    });
  });

  it('names every missing credential, never printing a secret', () => {
    let message = '';
    try {
      loadConfig({ ...base, BILLING_PROVIDER: 'mpesa', MPESA_CONSUMER_SECRET: 'hunter2' });
    } catch (err) {
      message = (err as Error).message;
    }
    for (const name of [
      'BILLING_CALLBACK_URL',
      'MPESA_CONSUMER_KEY',
      'MPESA_SHORTCODE',
      'MPESA_PASSKEY',
    ]) {
      expect(message).toContain(`${name} (unset): is required when BILLING_PROVIDER=mpesa`);
    }
    expect(message).not.toContain('MPESA_CONSUMER_SECRET');
    expect(message).not.toContain('hunter2');
  });

  it('refuses an http callback URL and a malformed shortcode', () => {
    expect(() =>
      loadConfig({ ...base, ...mpesa, BILLING_CALLBACK_URL: 'http://auth.example.com' }),
    ).toThrow(/BILLING_CALLBACK_URL .*must be an https URL/);
    expect(() => loadConfig({ ...base, ...mpesa, MPESA_SHORTCODE: '12' })).toThrow(
      /MPESA_SHORTCODE .*5 to 7 digit/,
    );
  });

  it.each([
    ['PAYMENT_QUERY_INTERVAL_MS', '100', '99', '600000', '600001'],
    ['PAYMENT_TIMEOUT_MS', '1000', '999', '3600000', '3600001'],
    ['BILLING_SWEEP_INTERVAL_MS', '100', '99', '3600000', '3600001'],
    ['RENEWAL_REMINDER_MS', '60000', '59999', '5184000000', '5184000001'],
    ['MPESA_TIMEOUT_MS', '1000', '999', '120000', '120001'],
  ])('%s accepts %s and refuses %s, accepts %s and refuses %s', (name, min, below, max, above) => {
    expect(() => parseBillingEnv({ ...mpesa, [name]: min })).not.toThrow();
    expect(() => parseBillingEnv({ ...mpesa, [name]: max })).not.toThrow();
    expect(() => parseBillingEnv({ ...mpesa, [name]: below })).toThrow(new RegExp(name));
    expect(() => parseBillingEnv({ ...mpesa, [name]: above })).toThrow(new RegExp(name));
  });
});

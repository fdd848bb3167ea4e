import { describe, expect, it } from 'vitest';
import { isSettled, type Payment, paymentText, pendingPayment, phoneHint } from '../src/billing.js';

describe('phoneHint', () => {
  it('accepts the three forms the server normalises, with spaces or dashes', () => {
    for (const n of [
      '0712345678',
      '0712 345 678',
      '+254712345678',
      '254712345678',
      '254-712-345-678',
    ]) {
      expect(phoneHint(n), n).toBeUndefined();
    }
  });

  it('explains the accepted forms for an empty or malformed number', () => {
    expect(phoneHint('')).toMatch(/07XXXXXXXX, \+2547XXXXXXXX or 2547XXXXXXXX/);
    for (const n of ['071234567', '07123456789', '0812345678', '+1 555 0100', 'phone']) {
      expect(phoneHint(n), n).toMatch(/does not look like a Safaricom number/);
    }
  });
});

describe('paymentText', () => {
  it('asks for the PIN while pending and names the plan on success', () => {
    expect(isSettled('pending')).toBe(false);
    expect(paymentText({ status: 'pending', reason: null }, 'Hobby')).toMatch(/enter your PIN/);
    expect(isSettled('succeeded')).toBe(true);
    expect(paymentText({ status: 'succeeded', reason: null }, 'Hobby')).toBe(
      'Payment succeeded: you are on Hobby.',
    );
  });

  it("gives the provider's reason and says the plan is unchanged when it did not pay", () => {
    expect(
      paymentText(
        { status: 'cancelled', reason: 'The payment was cancelled on the phone' },
        'Hobby',
      ),
    ).toBe('The payment was cancelled on the phone. Your plan is unchanged.');
    expect(paymentText({ status: 'failed', reason: 'Wrong PIN.' }, 'Hobby')).toBe(
      'Payment failed. Wrong PIN. Your plan is unchanged.',
    );
    expect(paymentText({ status: 'timed_out', reason: null }, 'Hobby')).toBe(
      'Payment timed out. The phone did not answer the prompt in time. Your plan is unchanged.',
    );
  });
});

describe('pendingPayment', () => {
  const p = (id: string, status: Payment['status']) => ({ id, status }) as Payment;
  it('finds the newest pending payment in a newest-first list, or none', () => {
    expect(pendingPayment([p('a', 'failed'), p('b', 'pending'), p('c', 'pending')])?.id).toBe('b');
    expect(pendingPayment([p('a', 'succeeded')])).toBeUndefined();
  });
});

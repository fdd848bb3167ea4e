import { describe, expect, it } from 'vitest';
import { isNormalisedPhone, maskPhone, normalisePhone } from './phone.js';

describe('normalisePhone', () => {
  it.each([
    ['0708374149', '254708374149'],
    ['0708 374 149', '254708374149'],
    ['+254708374149', '254708374149'],
    ['+254 708-374-149', '254708374149'],
    ['254708374149', '254708374149'],
    ['  254708374149  ', '254708374149'],
  ])('reads %j as %s', (input, phone) => {
    expect(normalisePhone(input)).toEqual({ ok: true, phone });
    expect(isNormalisedPhone(phone)).toBe(true);
  });

  it.each([
    ['', 'is not a phone number'],
    ['abc', 'is not a phone number'],
    ['708374149', 'is not a phone number'],
    ['07083741490', 'must be 2547 followed by 8 digits'],
    ['070837414', 'must be 2547 followed by 8 digits'],
    ['+255708374149', 'is not a phone number'],
    ['0208374149', 'must be 2547 followed by 8 digits'],
    ['+2547083741', 'must be 2547 followed by 8 digits'],
  ])('refuses %j, saying how to write it', (input, message) => {
    const result = normalisePhone(input);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.message).toContain(message);
      expect(result.message).toContain('07XXXXXXXX, +2547XXXXXXXX or 2547XXXXXXXX');
    }
  });

  it('masks all but the country prefix and the last four digits', () => {
    expect(maskPhone('254708374149')).toBe('2547****4149');
  });
});

import { describe, expect, it } from 'vitest';
import { mapResultCode } from './result-codes.js';

describe('mapResultCode', () => {
  it.each([
    ['0', 'succeeded'],
    ['1', 'failed'],
    ['1032', 'cancelled'],
    ['1037', 'timed_out'],
    ['1019', 'timed_out'],
    ['2001', 'failed'],
    ['1025', 'failed'],
    ['1001', 'failed'],
  ])('maps %s to %s', (code, outcome) => {
    expect(mapResultCode(code).outcome).toBe(outcome);
  });

  it('accepts codes as numbers, as callbacks send them', () => {
    expect(mapResultCode(1032).outcome).toBe('cancelled');
  });

  it('gives success no reason and every failure one that says what to do', () => {
    expect(mapResultCode('0').reason).toBeUndefined();
    expect(mapResultCode('1').reason).toMatch(/balance is too low.*top up/);
    expect(mapResultCode('2001').reason).toMatch(/PIN.*wrong/);
    expect(mapResultCode('1032').reason).toMatch(/cancelled/);
  });

  it('fails an unknown code, keeping its code and description', () => {
    const mapped = mapResultCode('9999', 'Something odd');
    expect(mapped.outcome).toBe('failed');
    expect(mapped.reason).toContain('code 9999: Something odd');
  });
});

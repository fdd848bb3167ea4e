import { describe, expect, it } from 'vitest';
import { addOneMonth, renewalBase } from './period.js';

describe('addOneMonth', () => {
  it.each([
    ['2026-01-15T10:20:30.000Z', '2026-02-15T10:20:30.000Z'],
    ['2026-01-31T00:00:00.000Z', '2026-02-28T00:00:00.000Z'],
    ['2028-01-31T00:00:00.000Z', '2028-02-29T00:00:00.000Z'],
    ['2026-12-31T23:59:59.999Z', '2027-01-31T23:59:59.999Z'],
    ['2026-03-31T12:00:00.000Z', '2026-04-30T12:00:00.000Z'],
  ])('%s + 1 month = %s', (from, to) => {
    expect(addOneMonth(new Date(from)).toISOString()).toBe(to);
  });
});

describe('renewalBase', () => {
  const now = new Date('2026-06-01T00:00:00Z');
  const later = new Date('2026-06-20T00:00:00Z');
  const earlier = new Date('2026-05-20T00:00:00Z');
  it('extends a running paid period from its end, not from today', () => {
    expect(renewalBase(later, true, now)).toBe(later);
  });
  it('starts from now when the period lapsed, there is none, or the plan is free', () => {
    expect(renewalBase(earlier, true, now)).toBe(now);
    expect(renewalBase(null, true, now)).toBe(now);
    expect(renewalBase(later, false, now)).toBe(now);
  });
});

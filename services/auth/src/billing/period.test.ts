import { describe, expect, it } from 'vitest';
import { addOneMonth, paidPeriodEnd } from './period.js';

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

describe('paidPeriodEnd', () => {
  const DAY = 86_400_000;
  const now = new Date('2026-06-01T00:00:00Z');
  const free = { id: 'free', paid: false, price: { kes: 0 } };
  const hobby = { id: 'hobby', paid: true, price: { kes: 1200 } };
  const startup = { id: 'startup', paid: true, price: { kes: 6500 } };
  const in29Days = new Date(now.getTime() + 29 * DAY);

  it('renews the running plan from its period end, not from today', () => {
    expect(paidPeriodEnd({ plan: hobby, end: in29Days }, hobby, now)).toEqual(
      addOneMonth(in29Days),
    );
  });

  it('starts from now when the period lapsed, there is none, or the plan is free', () => {
    const month = addOneMonth(now);
    expect(paidPeriodEnd({ plan: hobby, end: new Date(now.getTime() - DAY) }, hobby, now)).toEqual(
      month,
    );
    expect(paidPeriodEnd({ plan: undefined, end: null }, hobby, now)).toEqual(month);
    expect(paidPeriodEnd({ plan: free, end: in29Days }, hobby, now)).toEqual(month);
    expect(paidPeriodEnd({ plan: hobby, end: in29Days }, startup, new Date(in29Days))).toEqual(
      addOneMonth(in29Days),
    );
  });

  it.each([
    ['an upgrade', hobby, startup, (29 * DAY * 1200) / 6500],
    ['a downgrade', startup, hobby, (29 * DAY * 6500) / 1200],
  ])(
    '%s starts the new plan now and converts the unused days at the price ratio',
    (_, from, to, creditMs) => {
      const end = paidPeriodEnd({ plan: from, end: in29Days }, to, now);
      expect(end.getTime()).toBe(addOneMonth(now).getTime() + Math.floor(creditMs));
    },
  );

  it('converts time for time to a paid plan priced 0', () => {
    const gift = { id: 'gift', paid: true, price: { kes: 0 } };
    expect(paidPeriodEnd({ plan: hobby, end: in29Days }, gift, now).getTime()).toBe(
      addOneMonth(now).getTime() + 29 * DAY,
    );
  });
});

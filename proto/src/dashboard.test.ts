import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { dashboardRecipient, isDashboardRecipient } from './dashboard.js';
import { isUuidV4 } from './uuid.js';

describe('dashboardRecipient', () => {
  it('is a UUID v4, stable for an account, and not the account id itself', () => {
    const account = '0b6a5d3e-7c41-4f2a-9d0e-1a2b3c4d5e6f';
    const recipient = dashboardRecipient(account);
    expect(isUuidV4(recipient)).toBe(true);
    expect(recipient).toBe(dashboardRecipient(account));
    expect(recipient).not.toBe(account);
  });

  it('differs between accounts (one-to-one over v4 account ids)', () => {
    const accounts = Array.from({ length: 5000 }, () => randomUUID());
    const recipients = new Set(accounts.map(dashboardRecipient));
    expect(recipients.size).toBe(accounts.length);
    for (const a of accounts.slice(0, 50)) expect(recipients.has(a)).toBe(false);
  });

  it('refuses what is not a lower-case UUID', () => {
    expect(() => dashboardRecipient('0B6A5D3E-7C41-4F2A-9D0E-1A2B3C4D5E6F')).toThrow(TypeError);
    expect(() => dashboardRecipient('a')).toThrow(/lower-case UUID/);
  });
});

describe('isDashboardRecipient', () => {
  const account = randomUUID();
  it("knows the account's own dashboard recipient, in any case", () => {
    expect(isDashboardRecipient(account, dashboardRecipient(account))).toBe(true);
    expect(isDashboardRecipient(account, dashboardRecipient(account).toUpperCase())).toBe(true);
  });
  it("is false for another account's dashboard recipient and for any other id", () => {
    expect(isDashboardRecipient(account, dashboardRecipient(randomUUID()))).toBe(false);
    expect(isDashboardRecipient(account, randomUUID())).toBe(false);
    expect(isDashboardRecipient('not-a-uuid', randomUUID())).toBe(false);
  });
});

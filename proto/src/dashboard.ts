/**
 * The dashboard's own recipient: where auth dispatches an account's billing notices (payment
 * progress, renewal reminders) and where the dashboard listens with a `dashboard` credential.
 * Pure string work (no crypto, no zod) so ingress, the edge, auth and the browser compute the same
 * id.
 */

/** XOR mask over the account id's 32 hex digits; zero on the version and variant digits. */
const MASK = 'd5a9b0c3e1f2074b0a6d39c85e21f47b';
const HEX = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The account's dashboard recipient: a UUID v4 derived from the account id (each hex digit XORed
 * with a fixed mask, then the version digit set to 4 and the variant to 10xx), so it is stable
 * across sessions (a reconnecting dashboard drains the same queue) and distinct per account
 * (account ids are v4 UUIDs, whose version and variant bits are fixed, so the map is one-to-one).
 * Throws a TypeError when `account` is not a lower-case UUID.
 */
export function dashboardRecipient(account: string): string {
  // Every event of a batch (and every dispatch of a busy account) asks for the same account's
  // recipient; the mapping is pure, so the last answer is kept.
  if (last !== undefined && account === last.account) return last.recipient;
  const recipient = computeDashboardRecipient(account);
  last = { account, recipient };
  return recipient;
}

/** The last account asked about and its dashboard recipient. */
let last: { account: string; recipient: string } | undefined;

function computeDashboardRecipient(account: string): string {
  if (!HEX.test(account)) {
    throw new TypeError(`account must be a lower-case UUID, got ${JSON.stringify(account)}`);
  }
  const hex = account.replaceAll('-', '');
  let out = '';
  for (let i = 0; i < 32; i++) {
    let digit = Number.parseInt(hex[i] ?? '0', 16) ^ Number.parseInt(MASK[i] ?? '0', 16);
    if (i === 12) digit = 4;
    if (i === 16) digit = 0x8 | (digit & 0x3);
    out += digit.toString(16);
  }
  return `${out.slice(0, 8)}-${out.slice(8, 12)}-${out.slice(12, 16)}-${out.slice(16, 20)}-${out.slice(20)}`;
}

/** True when `recipient` is `account`'s dashboard recipient (both lower case). */
export function isDashboardRecipient(account: string, recipient: string): boolean {
  return HEX.test(account) && recipient.toLowerCase() === dashboardRecipient(account);
}

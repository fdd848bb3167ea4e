/**
 * Kenyan mobile numbers as M-Pesa wants them: `2547XXXXXXXX` (12 digits). Accepts what people
 * type: `0712 345 678`, `+254712345678`, `254712345678`, with spaces, dashes or dots.
 */
const MSISDN = /^2547\d{8}$/;

export type PhoneResult = { ok: true; phone: string } | { ok: false; message: string };

export const PHONE_HINT = 'give a Safaricom number as 07XXXXXXXX, +2547XXXXXXXX or 2547XXXXXXXX';

/** The number as `2547XXXXXXXX`, or a message saying what is wrong and how to write it. */
export function normalisePhone(input: string): PhoneResult {
  const compact = input.trim().replace(/[\s.\-()]/g, '');
  let digits: string;
  if (/^\+254\d+$/.test(compact)) digits = compact.slice(1);
  else if (/^254\d+$/.test(compact)) digits = compact;
  else if (/^0\d+$/.test(compact)) digits = `254${compact.slice(1)}`;
  else return { ok: false, message: `"${input}" is not a phone number: ${PHONE_HINT}` };
  if (!MSISDN.test(digits)) {
    return {
      ok: false,
      message: `"${input}" is not a Kenyan mobile number (it must be 2547 followed by 8 digits): ${PHONE_HINT}`,
    };
  }
  return { ok: true, phone: digits };
}

/** True for an already-normalised number. */
export function isNormalisedPhone(value: string): boolean {
  return MSISDN.test(value);
}

/** `2547****4149`: enough for a user to recognise their number in logs and lists. */
export function maskPhone(phone: string): string {
  return phone.length > 8 ? `${phone.slice(0, 4)}****${phone.slice(-4)}` : '****';
}

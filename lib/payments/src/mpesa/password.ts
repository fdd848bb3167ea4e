/**
 * Daraja's STK push credentials: `Timestamp` is `YYYYMMDDHHmmss` in East Africa Time (UTC+3,
 * no daylight saving), and `Password` is base64(shortcode + passkey + timestamp). Daraja refuses
 * a password whose timestamp is far from its own clock, so both come from one instant.
 */
const EAT_OFFSET_MS = 3 * 3600_000;

export function darajaTimestamp(at: Date): string {
  const eat = new Date(at.getTime() + EAT_OFFSET_MS);
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    String(eat.getUTCFullYear()) +
    pad(eat.getUTCMonth() + 1) +
    pad(eat.getUTCDate()) +
    pad(eat.getUTCHours()) +
    pad(eat.getUTCMinutes()) +
    pad(eat.getUTCSeconds())
  );
}

export function stkPassword(shortcode: string, passkey: string, timestamp: string): string {
  return Buffer.from(`${shortcode}${passkey}${timestamp}`, 'utf8').toString('base64');
}

import { createHmac } from 'node:crypto';

/**
 * The Standard Webhooks headers of one attempt: `webhook-id` (the same on every retry),
 * `webhook-timestamp` (unix seconds of this attempt) and `webhook-signature`, one
 * `v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>` per key, space-separated (during a
 * rotation's overlap the new secret's first, then the old one's).
 */
export function signedHeaders(
  id: string,
  unixSeconds: number,
  body: string,
  keys: readonly Buffer[],
): Record<string, string> {
  const content = `${id}.${unixSeconds}.${body}`;
  const signature = keys
    .map((key) => `v1,${createHmac('sha256', key).update(content).digest('base64')}`)
    .join(' ');
  return {
    'content-type': 'application/json',
    'user-agent': 'Herald-Webhooks/1',
    'webhook-id': id,
    'webhook-timestamp': String(unixSeconds),
    'webhook-signature': signature,
  };
}

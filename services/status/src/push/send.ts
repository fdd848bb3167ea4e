import { type OutboundClient, OutboundError } from '@herald/outbound';
import type { PushMessage } from '@herald/proto';
import webpush from 'web-push';
import type { Vapid } from './credentials.js';

/** Where a push goes: a Web Push subscription's endpoint and keys. */
export interface Target {
  endpoint: string;
  p256dh: string | null;
  auth: string | null;
}

/** What the push service answered, or why nothing came. */
export interface SendResult {
  status: number | null;
  retryAfter: string | undefined;
  /** No answer: the address rule refused it, it timed out, or the network failed. */
  error: string | null;
  failure: 'timeout' | 'network' | 'refused' | null;
  latencyMs: number;
}

/**
 * One Web Push request: web-push builds it (RFC 8291 aes128gcm with the subscription's keys,
 * RFC 8292 VAPID with the account's, `TTL`, `Urgency`, `Topic`), Herald's outbound client sends
 * it, so the address rule (https, public addresses unless PUSH_ALLOW_PRIVATE) holds for push
 * endpoints as it does for webhooks, at the address it checked.
 */
export async function sendWebPush(
  client: OutboundClient,
  target: Target,
  vapid: Vapid,
  msg: PushMessage,
  ttlS: number,
  signal?: AbortSignal,
): Promise<SendResult> {
  const started = Date.now();
  const details = webpush.generateRequestDetails(
    { endpoint: target.endpoint, keys: { p256dh: target.p256dh ?? '', auth: target.auth ?? '' } },
    JSON.stringify(msg),
    {
      vapidDetails: vapid,
      TTL: ttlS,
      topic: msg.tag,
      urgency: 'normal',
      contentEncoding: 'aes128gcm',
    },
  );
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(details.headers)) headers[k] = String(v);
  try {
    const res = await client.post(details.endpoint, headers, details.body ?? '', signal);
    return {
      status: res.status,
      retryAfter: res.retryAfter,
      error: null,
      failure: null,
      latencyMs: Date.now() - started,
    };
  } catch (err) {
    return failed(err, started);
  }
}

/** A request that got no answer: why. */
export function failed(err: unknown, started: number): SendResult {
  return {
    status: null,
    retryAfter: undefined,
    error: err instanceof Error ? err.message : String(err),
    failure: err instanceof OutboundError ? err.kind : 'network',
    latencyMs: Date.now() - started,
  };
}

import { errorOfReply, PUSH_API_SUBJECT, PushVapidReply } from '@herald/proto';
import type { TestWebPushSubscription } from '@herald/testkit';
import type { NatsConnection } from 'nats';

/** How long the VAPID key's making may take to be answered, ms. */
const REQUEST_TIMEOUT_MS = 10_000;
/** VAPID's `sub` of the bench's accounts: well formed, reaching nobody. */
export const BENCH_VAPID_SUBJECT = 'mailto:bench@bench.herald';

/**
 * Makes the account's VAPID key pair over the push API's request subject, as auth sends it for
 * `push configure --vapid generate` (the status service answers); a refusal throws with its code.
 */
export async function configureVapid(nc: NatsConnection, account: string): Promise<string> {
  const req = { v: 1, op: 'configure-vapid', account_id: account, subject: BENCH_VAPID_SUBJECT };
  const reply = await nc.request(PUSH_API_SUBJECT, JSON.stringify(req), {
    timeout: REQUEST_TIMEOUT_MS,
  });
  const parsed = PushVapidReply.parse(JSON.parse(reply.string()));
  if (!parsed.ok) throw errorOfReply(parsed);
  return parsed.public_key;
}

/** The body of `POST /push/subscriptions` a browser's SDK posts for a Web Push subscription. */
export function subscriptionBody(
  apiKey: string,
  recipient: string,
  subscription: TestWebPushSubscription,
): string {
  return JSON.stringify({
    api_key: apiKey,
    recipient,
    client: 'mobile',
    kind: 'webpush',
    subscription,
  });
}

/** One push as the test push service decrypted it: the event ids it stands for. */
export interface PushedMessage {
  at: number;
  ids: readonly string[];
}

/**
 * Pushes per second from the first arrival to the last (n − 1 intervals over their span); NaN
 * with fewer than two, or all at one instant.
 */
export function arrivalRate(atMs: readonly number[]): number {
  if (atMs.length < 2) return Number.NaN;
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const t of atMs) {
    if (t < first) first = t;
    if (t > last) last = t;
  }
  const span = (last - first) / 1000;
  return span > 0 ? (atMs.length - 1) / span : Number.NaN;
}

/**
 * From each event's acceptance (epoch ms, by id) to the arrival of the push that stood for it,
 * ms; events no push stood for, and pushed ids the map does not hold, are left out.
 */
export function pushLagsMs(
  pushes: readonly PushedMessage[],
  acceptedAt: ReadonlyMap<string, number>,
): number[] {
  const lags: number[] = [];
  for (const p of pushes)
    for (const id of p.ids) {
      const at = acceptedAt.get(id);
      if (at !== undefined) lags.push(p.at - at);
    }
  return lags;
}

/** The event ids a decrypted push message stands for (`ids`), none when it carries none. */
export function idsOfMessage(message: unknown): string[] {
  const ids = (message as { ids?: unknown } | undefined)?.ids;
  return Array.isArray(ids) ? ids.filter((x): x is string => typeof x === 'string') : [];
}

/** An A/B run's windows in ABBA order: a, b, b, a for an even run, b, a, a, b for an odd one. */
export function abbaOrder<T>(a: T, b: T, run: number): T[] {
  return run % 2 === 0 ? [a, b, b, a] : [b, a, a, b];
}

/** CPU per event over several windows pooled, µs: their seconds over their deliveries. */
export function pooledPerEventUs(
  windows: ReadonlyArray<{ delivered: number; seconds: number }>,
): number {
  const delivered = windows.reduce((n, w) => n + w.delivered, 0);
  const seconds = windows.reduce((n, w) => n + w.seconds, 0);
  return delivered > 0 ? (1e6 * seconds) / delivered : Number.NaN;
}

/** The arithmetic mean; NaN for none. */
export function mean(values: readonly number[]): number {
  return values.length > 0 ? values.reduce((a, b) => a + b, 0) / values.length : Number.NaN;
}

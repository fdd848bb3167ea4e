import { HeraldError } from './errors.js';
import { errorDetail } from './frames.js';
import type { Resolved } from './options.js';

/**
 * The push routes of ingress-api (proto/push.ts, docs/api.md "Push"), for `@herald/sdk/push`:
 * the account's VAPID public key, and a recipient's Web Push subscriptions. Every call carries the
 * key (and the recipient token of a key that requires one) as `/ws/connect` does.
 */

/** The part of a `fetch` answer Herald's push routes give: a JSON body or nothing (204). */
type Answer = { status: number; body: unknown };

/** One request to `{baseUrl}{path}`, given up when `signal` aborts (the caller's deadline). */
async function call(
  options: Resolved,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  signal: AbortSignal,
  body?: object,
): Promise<Answer> {
  const fetchFn = options.fetch ?? globalThis.fetch;
  let res: Response;
  try {
    res = await fetchFn(`${options.baseUrl}${path}`, {
      method,
      signal,
      cache: 'no-store',
      ...(body
        ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
        : {}),
    });
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    throw new HeraldError('network_error', `Could not reach Herald at ${options.baseUrl}: ${err}`, {
      cause: err,
    });
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const ok = res.status >= 200 && res.status < 300;
  if (ok) return { status: res.status, body: parsed };
  const detail = errorDetail((parsed as { error?: unknown } | undefined)?.error);
  throw detail
    ? new HeraldError(detail.code, detail.message, { field: detail.field, httpStatus: res.status })
    : new HeraldError(
        'unexpected_response',
        `Herald answered ${method} ${path.split('?')[0]} with HTTP ${res.status} and a body that is not Herald's`,
        { httpStatus: res.status },
      );
}

function unexpected(what: string, status: number): HeraldError {
  return new HeraldError('unexpected_response', `Herald's answer has no ${what}`, {
    httpStatus: status,
  });
}

/** `GET /push/vapid-public-key`: the account's VAPID public key (base64url, 65 bytes). */
export async function vapidPublicKey(options: Resolved, signal: AbortSignal): Promise<string> {
  const q = new URLSearchParams({ api_key: options.apiKey });
  const { status, body } = await call(options, 'GET', `/push/vapid-public-key?${q}`, signal);
  const key = (body as { public_key?: unknown } | undefined)?.public_key;
  if (typeof key !== 'string' || !/^[\w-]{80,100}$/.test(key))
    throw unexpected('public_key', status);
  return key;
}

/** What identifies the caller to the push routes: key, recipient, token, client, device. */
export interface PushCaller {
  recipient: string;
  token: string | undefined;
}

/**
 * `POST /push/subscriptions`: registers (or finds, by endpoint) the browser's subscription for
 * the recipient; its id, which `DELETE` takes.
 */
export async function postSubscription(
  options: Resolved,
  caller: PushCaller,
  subscription: PushSubscriptionJSON,
  signal: AbortSignal,
): Promise<string> {
  const { status, body } = await call(options, 'POST', '/push/subscriptions', signal, {
    api_key: options.apiKey,
    recipient: caller.recipient,
    client: options.client,
    ...(caller.token ? { token: caller.token } : {}),
    ...(options.device ? { device: options.device } : {}),
    kind: 'webpush',
    subscription,
  });
  return idOf(body, status);
}

/**
 * `POST /push/subscriptions` with a native app's device token (`kind` fcm or apns): here `token`
 * is the device token and the recipient token travels as `recipient_token`.
 */
export async function postDevice(
  options: Resolved,
  caller: PushCaller,
  device: { kind: 'fcm' | 'apns'; token: string; device: string | undefined },
  signal: AbortSignal,
): Promise<string> {
  const { status, body } = await call(options, 'POST', '/push/subscriptions', signal, {
    api_key: options.apiKey,
    recipient: caller.recipient,
    client: options.client,
    ...(device.device ? { device: device.device } : {}),
    kind: device.kind,
    token: device.token,
    ...(caller.token ? { recipient_token: caller.token } : {}),
  });
  return idOf(body, status);
}

function idOf(body: unknown, status: number): string {
  const id = (body as { id?: unknown } | undefined)?.id;
  if (typeof id !== 'string' || id === '') throw unexpected('id', status);
  return id;
}

/** `DELETE /push/subscriptions/{id}`: Herald stops pushing to it. */
export async function deleteSubscription(
  options: Resolved,
  caller: PushCaller,
  id: string,
  signal: AbortSignal,
): Promise<void> {
  const q = new URLSearchParams({ api_key: options.apiKey, recipient: caller.recipient });
  if (caller.token) q.set('token', caller.token);
  await call(options, 'DELETE', `/push/subscriptions/${encodeURIComponent(id)}?${q}`, signal);
}

/**
 * The account API, same origin: the session cookie rides along by itself; the CSRF token from
 * login is kept in sessionStorage (readable by this origin's scripts only) and sent on every
 * request that changes something.
 */
const CSRF_KEY = 'herald.csrf';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export function setCsrf(token: string | undefined): void {
  if (token) sessionStorage.setItem(CSRF_KEY, token);
  else sessionStorage.removeItem(CSRF_KEY);
}

/**
 * Whether this tab logged in (it holds the login's CSRF token). Without one the page could read but
 * not change anything, so it shows the login form at once, without asking `GET /v1/account` for
 * a 401 the browser would log in red on every first visit.
 */
export function loggedInHere(): boolean {
  return sessionStorage.getItem(CSRF_KEY) !== null;
}

export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const csrf = sessionStorage.getItem(CSRF_KEY);
  if (csrf && method !== 'GET') headers['X-Herald-CSRF'] = csrf;
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.status === 204) return undefined as T;
  const json = await res.json().catch(() => ({}));
  if (!res.ok) {
    const e = (json as { error?: { code?: string; message?: string; field?: string } }).error;
    throw new ApiError(res.status, e?.code ?? 'error', e?.message ?? res.statusText, e?.field);
  }
  return json as T;
}

export interface Key {
  id: string;
  /** What the user calls it; null: unnamed (lists show the prefix). */
  name?: string | null;
  key_prefix: string;
  kind: 'live' | 'test';
  client: 'web' | 'mobile';
  domain: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
  last_used_at?: string | null;
  scope?: 'subscribe' | 'dispatch' | 'both';
  require_token?: boolean;
  /** Inbox mode: days each event is kept per recipient; null: live events not stored. */
  inbox_days?: number | null;
  /** Made with the opt-out of the recipient tokens a web inbox key otherwise requires. */
  allow_unsigned_recipients?: boolean;
  /** A web key without tokens: what anyone with it and a user's id can do, how to turn tokens on. */
  token_warning?: string | null;
  /** Its events' payloads go into the account's webhook bodies. */
  webhook_payload?: boolean;
}

/** The types a webhook endpoint can subscribe to (docs/api.md, "Webhooks"). */
export const WEBHOOK_EVENT_TYPES = [
  'event.sent',
  'event.queued',
  'event.delivered',
  'event.failed',
  'event.read',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** A webhook endpoint as `GET /v1/webhooks` lists it (never its secret). */
export interface WebhookEndpoint {
  id: string;
  url: string;
  events: WebhookEventType[];
  created_at: string;
  /** Set when it was disabled (410 Gone, or failing too long), with why; null while active. */
  disabled_at: string | null;
  disabled_reason: string | null;
  /** The first failure since its last success; null when its last attempt succeeded. */
  failing_since: string | null;
  /** Messages waiting to be sent or retried. */
  pending: number;
}

/** An endpoint with its secret, as `create` and `rotate-secret` answer: the secret shown once. */
export interface WithSecret extends WebhookEndpoint {
  secret: string;
}

/** One attempt to send one message to an endpoint. */
export interface WebhookAttempt {
  at: string;
  message_id: string;
  type: string;
  /** The HTTP status answered; null when none was (`error` says why). */
  http_status: number | null;
  error: string | null;
  latency_ms: number;
}

export interface Limits {
  connections: number;
  dispatch_rate: number;
  dispatch_burst: number;
  queue_per_recipient: number;
}

export interface Account {
  id: string;
  email: string;
  plan: { id: string; name: string; paid: boolean };
  status: 'free' | 'active' | 'lapsed';
  period_end: string | null;
  limits: Limits | null;
  test_key_limits: Limits;
}

export interface Plan {
  id: string;
  name: string;
  paid: boolean;
  limits: Limits;
  price: { usd: number; kes: number };
}

export interface Counts {
  sent: number;
  pending: number;
  delivered: number;
  failed: number;
}

export interface EventView {
  id: string;
  status: string;
  key_id?: string | null;
  recipient?: string | null;
  sent_at?: string | null;
  queued_at?: string | null;
  delivered_at?: string | null;
  failed_at?: string | null;
  reason?: string | null;
  /** Push fallback (issue 40): when it first reached a subscription, and how many it reached. */
  pushed?: { at: string; subscriptions: number } | null;
}

/** `GET /v1/push`: the account's push credentials, their public parts only (never a secret). */
export interface PushCredentials {
  webpush: { configured: boolean; public_key: string | null; subject: string | null };
  fcm: { configured: boolean; project_id?: string | null; client_email?: string | null };
  apns: {
    configured: boolean;
    key_id?: string | null;
    team_id?: string | null;
    topic?: string | null;
    sandbox?: boolean | null;
  };
  subscriptions: number;
}

/** A push subscription as `GET /v1/push/subscriptions` lists it (never its keys or token). */
export interface PushSubscription {
  id: string;
  key_id: string;
  recipient: string;
  kind: 'webpush' | 'fcm' | 'apns';
  device: string | null;
  /** Web Push: the endpoint's origin only. */
  endpoint_origin: string | null;
  created_at: string;
  last_success_at: string | null;
}

/** A Pusher app as `GET /v1/pusher/apps` lists it (never its secret). */
export interface PusherApp {
  app_id: string;
  key: string;
  /** The Herald key the app is bound to: its plan, caps, domain, scope and limits apply. */
  key_id: string;
  user_ids: 'uuid' | 'any';
  /** The user channel template (`private-App.Models.User.{id}`), or null. */
  user_channel: string | null;
  created_at: string;
}

/** What `create` and `rotate-secret` answer: the secret, shown once. */
export interface PusherAppSecret {
  app_id: string;
  key: string;
  secret: string;
}

export interface DashboardConfig {
  ingress_url: string | null;
  ws_url: string | null;
  checkout_url: string | null;
  /** How long a rotated signing secret keeps working (TOKEN_SECRET_OVERLAP_MS). */
  secret_overlap_ms?: number;
}

/** A key as every list and picker names it: its name, then its prefix (the prefix alone if unnamed). */
export function keyLabel(k: Pick<Key, 'name' | 'key_prefix'>): string {
  return k.name ? `${k.name} (${k.key_prefix}…)` : `${k.key_prefix}…`;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * An API error with the page's name for its field in front ("Team id: team_id must be …"), so a
 * refusal says which input to fix.
 */
export function fieldError(err: unknown, labels: Record<string, string>): string {
  if (err instanceof ApiError && err.field && labels[err.field]) {
    return `${labels[err.field]}: ${err.message}`;
  }
  return errorText(err);
}

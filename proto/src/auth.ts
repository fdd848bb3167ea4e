import { z } from 'zod';
import { ErrorReply } from './error-reply.js';
import { Client } from './notify.js';
import { PlanLimits } from './plans.js';
import { PUSH_AFTER_MS_MAX, PUSH_BODY_MAX, PUSH_TITLE_MAX, PUSH_TTL_S_MAX } from './push.js';

/** The keys a customer holds (issued, listed, revoked through the account API and admin CLI). */
export const KeyKind = z.enum(['live', 'test']);
export type KeyKind = z.infer<typeof KeyKind>;

/**
 * Every credential auth verifies: the customer's keys, plus `dashboard`, the short-lived
 * credential auth mints for its own dashboard (dashboard.ts). Never listed or issued as a key.
 */
export const CredentialKind = z.enum(['live', 'test', 'dashboard']);
export type CredentialKind = z.infer<typeof CredentialKind>;

/** Key prefixes, so secret scanners can find leaked keys. */
export const KeyPrefix = { live: 'hk_live_', test: 'hk_test_', dashboard: 'hk_dash_' } as const;

/**
 * What a dashboard credential may do: `listen` (the browser's socket) or `send` (auth's own copy,
 * dispatching billing notices over NATS), and only as `recipient`, its account's dashboard
 * recipient.
 */
export const DashboardScope = z.object({
  role: z.enum(['listen', 'send']),
  recipient: z.string(),
});
export type DashboardScope = z.infer<typeof DashboardScope>;

/**
 * `rt.auth.verify` request. Callers send the SHA-256 of the key (hex), never the key itself, so
 * the secret does not cross NATS.
 */
export const AuthVerifyRequest = z.object({
  v: z.literal(1),
  key_hash: z.string().regex(/^[0-9a-f]{64}$/, 'key_hash must be 64 lower-case hex characters'),
  /**
   * Ask for the key's signing secrets too (whoever verifies recipient tokens: the edge, and
   * ingress's push subscription routes only; its dispatch path never asks).
   */
  signing_secrets: z.boolean().optional(),
});
export type AuthVerifyRequest = z.infer<typeof AuthVerifyRequest>;

/**
 * What a key may do: `subscribe` opens sockets only (browsers and apps), `dispatch` only sends
 * (servers), `both` either (the default, the spec's behaviour).
 */
export const KeyScope = z.enum(['subscribe', 'dispatch', 'both']);
export type KeyScope = z.infer<typeof KeyScope>;

/**
 * One signing secret a recipient token may be signed with: the current one (`until` null), or
 * the one a rotation replaced, valid until `until` (epoch ms).
 */
export const SigningSecret = z.object({
  secret: z.string().min(1),
  until: z.number().int().nullable(),
});
export type SigningSecret = z.infer<typeof SigningSecret>;

/** A key's push settings (`key create --push-after-ms N ...`, proto/push.ts). */
export const KeyPush = z.object({
  after_ms: z.number().int().min(0).max(PUSH_AFTER_MS_MAX),
  ttl_s: z.number().int().min(1).max(PUSH_TTL_S_MAX),
  title: z.string().min(1).max(PUSH_TITLE_MAX).optional(),
  body: z.string().max(PUSH_BODY_MAX).optional(),
  include_payload: z.boolean().optional(),
});
export type KeyPush = z.infer<typeof KeyPush>;

/** What a verified key lets the caller know: enough to route, authorise and limit. */
export const VerifiedKey = z.object({
  id: z.string(),
  account_id: z.string(),
  kind: CredentialKind,
  client: Client,
  /** Only for a `dashboard` credential: its role and its one recipient. */
  dashboard: DashboardScope.optional(),
  /** For web keys: the exact origin (`https://host[:port]`) requests must come from. */
  domain: z.string().nullable(),
  /** Epoch milliseconds after which the key is refused (`key_expired`); null = never. */
  expires_at: z.number().int().nullable(),
  /** The account's plan id. */
  plan: z.string(),
  /**
   * Epoch ms at which the account's paid subscription lapses (a Live key is then refused with
   * `plan_inactive`); null for the free plan, which never lapses.
   */
  plan_until: z.number().int().nullable(),
  /** The plan's limits, or the catalogue's `test_key_limits` for a Test key. */
  limits: PlanLimits,
  /** What the key may do; absent means `both` (an auth that predates scopes). */
  scope: KeyScope.optional(),
  /** Whether its sockets need a recipient token (`token=`); absent means no. */
  require_token: z.boolean().optional(),
  /**
   * Inbox mode (proto/inbox.ts): every event of the key is kept this many days per recipient, with
   * read state; absent or null means off (the spec's default: nothing delivered live is stored).
   */
  inbox_days: z.number().int().min(1).max(365).nullable().optional(),
  /**
   * Created with `--webhook-payload` (issue 39): its events' payloads go into the account's
   * webhook bodies, so ingress carries each on the event's `sent` or `pending` status record.
   * Absent means no.
   */
  webhook_payload: z.boolean().optional(),
  /**
   * Created with `--push-after-ms` (issue 40): its events unproven that long after acceptance are
   * pushed; absent means the key never pushes. `title`/`body` are the key's template (an event's
   * own `push` field wins), `ttl_s` the pushes' TTL, `include_payload` lets FCM/APNs carry the
   * payload (Web Push carries it anyway: it is encrypted end to end).
   */
  push: KeyPush.optional(),
  /** Only when asked for (`signing_secrets: true`) and the key requires tokens. */
  signing_secrets: z.array(SigningSecret).optional(),
});
export type VerifiedKey = z.infer<typeof VerifiedKey>;

/**
 * The answer: the verified key, or the one error envelope with the refusal (`invalid_api_key`,
 * `key_revoked`, `key_expired`, `plan_inactive`) or `internal` when auth could not tell.
 */
export const AuthVerifyReply = z.discriminatedUnion('ok', [
  z.object({ v: z.literal(1), ok: z.literal(true), key: VerifiedKey }),
  ErrorReply,
]);
export type AuthVerifyReply = z.infer<typeof AuthVerifyReply>;

/**
 * `rt.auth.invalidate` broadcast: drop cached verifications for this key (or every key of the
 * account) and re-check open sockets that used it.
 */
export const AuthInvalidate = z.object({
  v: z.literal(1),
  key_id: z.string().optional(),
  account_id: z.string().optional(),
  /**
   * `domain_changed`: a web key's registered domain was changed; re-check Origins.
   * `token_required`: a key now requires recipient tokens; its sockets without one are closed.
   * `pusher_app`: a Pusher app bound to the key was created, deleted or given a new secret; drop
   * cached app lookups of the key (a deleted app's sockets are closed 4001).
   */
  reason: z.enum([
    'revoked',
    'reset',
    'plan_changed',
    'domain_changed',
    'secret_rotated',
    'token_required',
    'pusher_app',
  ]),
});
export type AuthInvalidate = z.infer<typeof AuthInvalidate>;

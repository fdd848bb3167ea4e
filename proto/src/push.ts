import { z } from 'zod';
import { ErrorReply } from './error-reply.js';

/**
 * Push fallback (issue 40): an event of a key created with `--push-after-ms N` that no socket has
 * proved within N ms of its acceptance is pushed to every push subscription of its recipient
 * (Web Push, RFC 8030/8291/8292). The decision is the status service's: a `pending` record of
 * such a key carries the key's {@link PushSpec}, the writer keeps a due row in the transaction
 * that records it, and a `delivered` (or `read`) record deletes it before it is due. Credentials
 * (the account's VAPID key pair, the private key sealed) and subscriptions live in the status
 * service's Postgres; auth (admin CLI, account API) and ingress (the subscription routes) reach
 * them by one request subject, {@link PUSH_API_SUBJECT}. docs/api.md, "Push".
 */

/** The request subject of every push operation; the status service answers it. */
export const PUSH_API_SUBJECT = 'rt.pushapi.request';

/** Providers: Web Push (browsers), FCM HTTP v1 and APNs (native apps' device tokens). */
export const PUSH_KINDS = ['webpush', 'fcm', 'apns'] as const;
export const PushKind = z.enum(PUSH_KINDS, {
  error: `kind must be one of ${PUSH_KINDS.join(', ')}`,
});
export type PushKind = z.infer<typeof PushKind>;
/** The native providers: a subscription of these carries the device token the app obtained. */
export const DEVICE_PUSH_KINDS = ['fcm', 'apns'] as const;
export type DevicePushKind = (typeof DEVICE_PUSH_KINDS)[number];

/**
 * Most characters of a device token (FCM registration tokens are ~160, APNs tokens 64 hex
 * characters today, up to 200 by Apple's word): room to grow, never an unbounded row.
 */
export const PUSH_DEVICE_TOKEN_MAX = 1024;
/** A device token's characters: FCM's and APNs' alphabets, and safe in an APNs request path. */
export const PUSH_DEVICE_TOKEN_FORMAT = /^[A-Za-z0-9_:.-]+$/;
/** A device token as `subscribe-device` takes it. */
export const DeviceToken = z
  .string()
  .min(1, 'token must not be empty: give the device token the app got from FCM or APNs')
  .max(
    PUSH_DEVICE_TOKEN_MAX,
    `token must be at most ${PUSH_DEVICE_TOKEN_MAX} characters: give the device token the app got from FCM or APNs`,
  )
  .regex(
    PUSH_DEVICE_TOKEN_FORMAT,
    'token must be the device token as FCM or APNs gave it (A-Z, a-z, 0-9, _, :, . and -)',
  );

/** `--push-after-ms`: 0..1 hour. */
export const PUSH_AFTER_MS_MAX = 3_600_000;
/** A push's TTL (RFC 8030 `TTL`), seconds: default 1 day, at most 28 days (4 weeks). */
export const PUSH_TTL_S_DEFAULT = 86_400;
export const PUSH_TTL_S_MAX = 2_419_200;
export const PUSH_TITLE_MAX = 200;
export const PUSH_BODY_MAX = 1000;
export const PUSH_URL_MAX = 2048;
/** The title when neither the event nor the key names one. */
export const PUSH_DEFAULT_TITLE = 'New notification';
/**
 * Most characters of an event's payload a pending record carries for Web Push: RFC 8291 leaves
 * 3,993 bytes of plaintext in one record, so a larger payload never fits the message anyway.
 */
export const PUSH_PAYLOAD_JSON_MAX = 3993;

const Title = z
  .string()
  .min(1, 'push.title must not be empty')
  .max(PUSH_TITLE_MAX, `push.title must be at most ${PUSH_TITLE_MAX} characters`);
const Body = z.string().max(PUSH_BODY_MAX, `push.body must be at most ${PUSH_BODY_MAX} characters`);
const HttpsUrl = (field: string) =>
  z
    .string()
    .max(PUSH_URL_MAX, `${field} must be at most ${PUSH_URL_MAX} characters`)
    .refine((s) => /^https?:\/\//.test(s) || s.startsWith('/'), {
      message: `${field} must be an http(s) URL or a path starting with /`,
    });

/** The notify body's optional `"push"` field: what the notification shows for this event. */
export const PushContent = z
  .object({
    title: Title,
    body: Body.optional(),
    url: HttpsUrl('push.url').optional(),
    icon: HttpsUrl('push.icon').optional(),
  })
  .strict();
export type PushContent = z.infer<typeof PushContent>;

/**
 * What a `pending` status record of a push key carries: the key's delay and TTL, the event's
 * content (its `push` field, else the key's template), and for Web Push (encrypted end to end)
 * the event's payload when it fits. Such a record travels alone, as a payload-carrying one does.
 */
export const PushSpec = z.object({
  after_ms: z.number().int().min(0).max(PUSH_AFTER_MS_MAX),
  ttl_s: z.number().int().min(1).max(PUSH_TTL_S_MAX),
  title: Title,
  body: Body.optional(),
  url: z.string().max(PUSH_URL_MAX).optional(),
  icon: z.string().max(PUSH_URL_MAX).optional(),
  /** The event's payload as the sender's JSON text (Web Push only; FCM/APNs only with the key's opt-in). */
  payload_json: z.string().max(PUSH_PAYLOAD_JSON_MAX).optional(),
  /** The key's `--push-include-payload`: FCM and APNs pushes carry `payload_json` too. */
  include_payload: z.boolean().optional(),
});
export type PushSpec = z.infer<typeof PushSpec>;

/**
 * What one push carries (the JSON plaintext of a Web Push message): the newest unproven event's
 * content and id, and how many of the recipient's events it stands for. `tag` is the collapse key
 * (the same for every push of one recipient), `ids` every event it covers (newest first).
 */
export const PushMessage = z.object({
  v: z.literal(1),
  id: z.string(),
  ids: z.array(z.string()),
  count: z.number().int().min(1),
  title: z.string(),
  body: z.string().optional(),
  url: z.string().optional(),
  icon: z.string().optional(),
  tag: z.string(),
  payload: z.unknown().optional(),
});
export type PushMessage = z.infer<typeof PushMessage>;

/** base64url without padding. */
const B64Url = z.string().regex(/^[A-Za-z0-9_-]+$/, 'must be base64url without padding');

/** A browser's PushSubscription, as `subscription.toJSON()` gives it. */
export const WebPushSubscription = z.object({
  endpoint: z
    .string()
    .url('subscription.endpoint must be an absolute URL')
    .max(PUSH_URL_MAX, `subscription.endpoint must be at most ${PUSH_URL_MAX} characters`),
  expirationTime: z.number().nullable().optional(),
  keys: z.object({
    /** The user agent's P-256 public key, uncompressed (65 bytes: 87 characters). */
    p256dh: B64Url.length(
      87,
      'subscription.keys.p256dh must be a 65-byte P-256 key (87 characters)',
    ),
    /** The 16-byte auth secret (22 characters). */
    auth: B64Url.length(22, 'subscription.keys.auth must be 16 bytes (22 characters)'),
  }),
});
export type WebPushSubscription = z.infer<typeof WebPushSubscription>;

/** A subscription as views show it (never its keys). */
export const PushSubscriptionView = z.object({
  id: z.string(),
  account_id: z.string(),
  key_id: z.string(),
  recipient: z.string(),
  kind: PushKind,
  device: z.string().nullable(),
  /** Web Push: the endpoint's origin only (the path is a bearer capability). */
  endpoint_origin: z.string().nullable(),
  created_at: z.string(),
  last_success_at: z.string().nullable(),
});
export type PushSubscriptionView = z.infer<typeof PushSubscriptionView>;

/** What `status` shows of an account's push set-up. */
export const PushCredentialsView = z.object({
  webpush: z.object({
    configured: z.boolean(),
    public_key: z.string().nullable(),
    subject: z.string().nullable(),
  }),
  /** FCM HTTP v1: the service account's public parts (never its private key). */
  fcm: z.object({
    configured: z.boolean(),
    project_id: z.string().nullable().optional(),
    client_email: z.string().nullable().optional(),
  }),
  /** APNs: the token key's public parts (never the key). */
  apns: z.object({
    configured: z.boolean(),
    key_id: z.string().nullable().optional(),
    team_id: z.string().nullable().optional(),
    topic: z.string().nullable().optional(),
    sandbox: z.boolean().nullable().optional(),
  }),
  subscriptions: z.number().int().nonnegative(),
});
export type PushCredentialsView = z.infer<typeof PushCredentialsView>;

const Id = z.string().min(1).max(64);
const AccountId = z.string().min(1).max(64);
const Recipient = z.string().min(1).max(64);
const Device = z.string().min(1).max(128);

/** Most characters of a PEM private key (a 4096-bit RSA key is ~3,300). */
export const PUSH_PRIVATE_KEY_PEM_MAX = 8192;
const Pem = (field: string) =>
  z
    .string()
    .max(
      PUSH_PRIVATE_KEY_PEM_MAX,
      `${field} must be at most ${PUSH_PRIVATE_KEY_PEM_MAX} characters`,
    )
    .refine((s) => /-----BEGIN (EC |RSA )?PRIVATE KEY-----/.test(s), {
      message: `${field} must be a PEM private key (-----BEGIN PRIVATE KEY-----...)`,
    });
const Short = (field: string, max: number) =>
  z
    .string()
    .min(1, `${field} must not be empty`)
    .max(max, `${field} must be at most ${max} characters`);

/**
 * The fields of an FCM service-account JSON file Herald uses (the rest is ignored): the project
 * pushes go to, the account's e-mail (the JWT's `iss`), its RSA private key and Google's token URI.
 */
export const FcmServiceAccount = z.object({
  project_id: Short('service_account.project_id', 128).regex(
    /^[a-z0-9-]+$/,
    'service_account.project_id must be a Firebase project id (a-z, 0-9 and -)',
  ),
  client_email: Short('service_account.client_email', 320).regex(
    /^\S+@\S+$/,
    'service_account.client_email must be the service account e-mail address',
  ),
  private_key: Pem('service_account.private_key'),
  token_uri: z
    .string()
    .url('service_account.token_uri must be an absolute URL')
    .max(PUSH_URL_MAX)
    .optional(),
});
export type FcmServiceAccount = z.infer<typeof FcmServiceAccount>;

/** An APNs token (.p8) key and where its pushes go. */
export const ApnsKey = z.object({
  key_pem: Pem('apns.key_pem'),
  key_id: Short('apns.key_id', 32).regex(
    /^[A-Z0-9]+$/,
    'apns.key_id must be the 10-character key id Apple shows (A-Z, 0-9)',
  ),
  team_id: Short('apns.team_id', 32).regex(
    /^[A-Z0-9]+$/,
    'apns.team_id must be the 10-character team id Apple shows (A-Z, 0-9)',
  ),
  topic: Short('apns.topic', 255).regex(
    /^[A-Za-z0-9.-]+$/,
    "apns.topic must be the app's bundle id (com.example.app)",
  ),
  sandbox: z.boolean(),
});
export type ApnsKey = z.infer<typeof ApnsKey>;

export const PushRequest = z.discriminatedUnion('op', [
  /** Makes (or replaces) the account's VAPID key pair; `subject` is VAPID's `sub` (mailto: or https:). */
  z.object({
    v: z.literal(1),
    op: z.literal('configure-vapid'),
    account_id: AccountId,
    subject: z.string().max(PUSH_URL_MAX).optional(),
  }),
  z.object({ v: z.literal(1), op: z.literal('status'), account_id: AccountId }),
  z.object({ v: z.literal(1), op: z.literal('vapid-public-key'), account_id: AccountId }),
  /** ingress, after the key, Origin, scope and recipient-token checks of `/ws/connect`. */
  z.object({
    v: z.literal(1),
    op: z.literal('subscribe'),
    account_id: AccountId,
    key_id: Id,
    recipient: Recipient,
    device: Device.optional(),
    kind: z.literal('webpush'),
    subscription: WebPushSubscription,
  }),
  /**
   * ingress, the same checks: a native app's device token (FCM registration token, APNs device
   * token). Idempotent per (account, kind, token).
   */
  z.object({
    v: z.literal(1),
    op: z.literal('subscribe-device'),
    account_id: AccountId,
    key_id: Id,
    recipient: Recipient,
    device: Device.optional(),
    kind: z.enum(DEVICE_PUSH_KINDS),
    token: DeviceToken,
  }),
  /** Stores (or replaces) the account's FCM service account, its private key sealed. */
  z.object({
    v: z.literal(1),
    op: z.literal('configure-fcm'),
    account_id: AccountId,
    service_account: FcmServiceAccount,
  }),
  /** Stores (or replaces) the account's APNs token key, sealed. */
  z.object({
    v: z.literal(1),
    op: z.literal('configure-apns'),
    account_id: AccountId,
    apns: ApnsKey,
  }),
  /** ingress (with `recipient`, the authorised one) or the operator's tools (without). */
  z.object({
    v: z.literal(1),
    op: z.literal('unsubscribe'),
    account_id: AccountId,
    id: Id,
    recipient: Recipient.optional(),
  }),
  z.object({
    v: z.literal(1),
    op: z.literal('list'),
    account_id: AccountId,
    recipient: Recipient.optional(),
  }),
  /** Sends a test push to one subscription now and answers what the push service said. */
  z.object({ v: z.literal(1), op: z.literal('test'), account_id: AccountId, id: Id }),
]);
export type PushRequest = z.infer<typeof PushRequest>;

const ok = <T extends z.ZodRawShape>(shape: T) =>
  z.discriminatedUnion('ok', [
    z.object({ v: z.literal(1), ok: z.literal(true), ...shape }),
    ErrorReply,
  ]);

/** `configure-vapid` and `vapid-public-key`. */
export const PushVapidReply = ok({ public_key: z.string(), subject: z.string() });
export const PushStatusReply = ok({ credentials: PushCredentialsView });
/** `subscribe` (`created` false when the same endpoint was registered already: the same id). */
export const PushSubscribeReply = ok({ id: z.string(), created: z.boolean() });
/** `unsubscribe`: the subscription as it was. */
export const PushSubscriptionReply = ok({ subscription: PushSubscriptionView });
export const PushListReply = ok({ subscriptions: z.array(PushSubscriptionView) });
/** `test`: what the push service answered (its HTTP status, or the error when none came). */
export const PushTestReply = ok({
  http_status: z.number().int().nullable(),
  error: z.string().nullable(),
  latency_ms: z.number().int().nonnegative(),
});

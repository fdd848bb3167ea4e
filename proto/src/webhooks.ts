import { z } from 'zod';
import { ErrorReply } from './error-reply.js';

/**
 * Delivery-status webhooks (issue 39): an account's endpoints receive every first transition of
 * its events, signed per the Standard Webhooks spec. Endpoints, the outbox and the attempts live in
 * the status service's Postgres (the outbox row is written in the transaction that records the
 * transition), and the status service sends them. Auth (the admin CLI and the account API) manages
 * endpoints by one request subject, {@link WEBHOOK_API_SUBJECT}. docs/api.md, "Webhooks".
 */

/** The request subject of every endpoint operation; the status service answers it. */
export const WEBHOOK_API_SUBJECT = 'rt.webhookapi.request';

/** The types an endpoint can subscribe to, one per transition. */
export const WEBHOOK_EVENT_TYPES = [
  'event.sent',
  'event.queued',
  'event.delivered',
  'event.failed',
  'event.read',
] as const;
export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES, {
  error: `each event type must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`,
});
export type WebhookEventType = z.infer<typeof WebhookEventType>;

/** The type of the message "send a test event" sends (never subscribed to: every endpoint gets it). */
export const WEBHOOK_TEST_TYPE = 'webhook.test';

/** What `data.status` says in each type's body (the names `POST /events/status` uses, and `read`). */
export const WEBHOOK_STATUS_OF_TYPE = {
  'event.sent': 'sent',
  'event.queued': 'pending',
  'event.delivered': 'delivered',
  'event.failed': 'failed',
  'event.read': 'read',
} as const satisfies Record<WebhookEventType, string>;

/** Longest URL an endpoint may have. */
export const WEBHOOK_URL_MAX = 2048;

/** `--events a,b,c`: a comma list of types, deduplicated; empty or absent means every type. */
export function parseWebhookEvents(list: string): WebhookEventType[] {
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return z.array(WebhookEventType).parse([...new Set(names)]);
}

/** The body of a webhook message (JSON). The event's payload only with the key's opt-in. */
export const WebhookBody = z.object({
  type: z.union([WebhookEventType, z.literal(WEBHOOK_TEST_TYPE)]),
  /** ISO 8601: when the transition happened (the test message: when it was asked for). */
  timestamp: z.string(),
  data: z.object({
    id: z.string(),
    recipient: z.string().nullable(),
    key_id: z.string().nullable(),
    status: z.string(),
    /** Epoch ms of the transition. */
    ts: z.number(),
    device: z.string().optional(),
    payload: z.unknown().optional(),
  }),
});
export type WebhookBody = z.infer<typeof WebhookBody>;

/** An endpoint as every view shows it (never its secret). Times are ISO 8601. */
export const WebhookEndpoint = z.object({
  id: z.string(),
  account_id: z.string(),
  url: z.string(),
  events: z.array(WebhookEventType),
  created_at: z.string(),
  /** Set when it was disabled (410 Gone, or failing for WEBHOOK_DISABLE_AFTER_MS); null if active. */
  disabled_at: z.string().nullable(),
  disabled_reason: z.string().nullable(),
  /** The first failure since its last success; null when its last attempt succeeded. */
  failing_since: z.string().nullable(),
  /** Messages waiting to be sent (or retried). */
  pending: z.number().int().nonnegative(),
});
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;

/** One attempt to send one message, newest first in a list. */
export const WebhookAttempt = z.object({
  at: z.string(),
  message_id: z.string(),
  type: z.string(),
  /** The HTTP status answered, or null when none was (the error says why). */
  http_status: z.number().int().nullable(),
  error: z.string().nullable(),
  latency_ms: z.number().int().nonnegative(),
});
export type WebhookAttempt = z.infer<typeof WebhookAttempt>;

/** Most attempts one `attempts` request returns. */
export const WEBHOOK_ATTEMPTS_MAX = 100;

const Id = z.string().min(1).max(64);
/**
 * The account that asks. The account API always sends it (an endpoint of another account is
 * `not_found`); the admin CLI, the operator's tool, sends it only where the command names one.
 */
const AccountId = z.string().min(1).max(64);

export const WebhookRequest = z.discriminatedUnion('op', [
  z.object({
    v: z.literal(1),
    op: z.literal('create'),
    account_id: AccountId,
    url: z.string().max(WEBHOOK_URL_MAX, `url must be at most ${WEBHOOK_URL_MAX} characters`),
    /** Absent or empty: every type. */
    events: z.array(WebhookEventType).optional(),
  }),
  z.object({ v: z.literal(1), op: z.literal('list'), account_id: AccountId }),
  z.object({ v: z.literal(1), op: z.literal('get'), id: Id, account_id: AccountId.optional() }),
  z.object({ v: z.literal(1), op: z.literal('delete'), id: Id, account_id: AccountId.optional() }),
  z.object({
    v: z.literal(1),
    op: z.literal('rotate-secret'),
    id: Id,
    account_id: AccountId.optional(),
  }),
  z.object({ v: z.literal(1), op: z.literal('enable'), id: Id, account_id: AccountId.optional() }),
  z.object({
    v: z.literal(1),
    op: z.literal('attempts'),
    id: Id,
    account_id: AccountId.optional(),
    limit: z.number().int().min(1).max(WEBHOOK_ATTEMPTS_MAX).optional(),
  }),
  z.object({ v: z.literal(1), op: z.literal('test'), id: Id, account_id: AccountId.optional() }),
  z.object({
    v: z.literal(1),
    op: z.literal('replay'),
    id: Id,
    account_id: AccountId.optional(),
    /** Epoch ms: every transition of the account's events at or after it is sent again. */
    since: z.number().int().nonnegative(),
  }),
]);
export type WebhookRequest = z.infer<typeof WebhookRequest>;

const ok = <T extends z.ZodRawShape>(shape: T) =>
  z.discriminatedUnion('ok', [
    z.object({ v: z.literal(1), ok: z.literal(true), ...shape }),
    ErrorReply,
  ]);

/** `create` and `rotate-secret`: the secret, shown this once (`whsec_` + base64 of 32 bytes). */
export const WebhookSecretReply = ok({ endpoint: WebhookEndpoint, secret: z.string() });
/** `get`, `delete` (the endpoint as it was), `enable`. */
export const WebhookEndpointReply = ok({ endpoint: WebhookEndpoint });
export const WebhookListReply = ok({ endpoints: z.array(WebhookEndpoint) });
export const WebhookAttemptsReply = ok({ attempts: z.array(WebhookAttempt) });
/** `test`: the message queued; `replay`: how many messages were queued. */
export const WebhookQueuedReply = ok({ message_id: z.string().optional(), queued: z.number() });

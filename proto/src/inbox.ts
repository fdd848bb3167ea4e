import { z } from 'zod';
import { ErrorReply } from './error-reply.js';
import { TopicName } from './topics.js';
import { UUID_V4 } from './uuid.js';

/**
 * Inbox mode (issue 32, opt-in per key with `--inbox-days N`): Herald keeps every event of such a
 * key, live ones included, per recipient for N days, with read state on the server. The store
 * lives in the status service (Postgres); ingress writes to it before it answers, the edges and
 * ingress's `/inbox/*` routes query it, and it publishes each recipient's unread count on
 * {@link inboxSubjects.unread} after every change. docs/architecture-history.md, "Inbox mode".
 */

/** Fewest and most days a key may keep its inbox (`--inbox-days`). */
export const INBOX_MIN_DAYS = 1;
export const INBOX_MAX_DAYS = 365;
/** Most events one history page (frame or HTTP) returns, and most ids one read mark names. */
export const INBOX_MAX_PAGE = 100;
export const INBOX_MAX_READ_IDS = 100;

export const InboxDays = z
  .number()
  .int()
  .min(INBOX_MIN_DAYS)
  .max(INBOX_MAX_DAYS, `inbox days must be ${INBOX_MIN_DAYS} to ${INBOX_MAX_DAYS}`);

/**
 * A history cursor: opaque to clients (today the decimal store sequence of the oldest event of
 * the page before). `null` asks for the newest page.
 */
export const InboxCursor = z.string().regex(/^[0-9]{1,20}$/, 'cursor must be a `next` value');

const Recipient = z
  .string()
  .regex(UUID_V4, 'recipient must be a UUID v4, the id you dispatch to')
  .transform((s) => s.toLowerCase());
const EventId = z.string().min(1).max(64);

/** One event as history returns it (frame and HTTP alike), newest first. */
export const InboxEvent = z.object({
  id: z.string(),
  ts: z.number(),
  payload: z.unknown(),
  read: z.boolean(),
});
export type InboxEvent = z.infer<typeof InboxEvent>;

/** One event to keep: `payload_json` is the sender's JSON text, stored and returned byte for byte. */
export const InboxStoreEvent = z.object({
  recipient: Recipient,
  id: EventId,
  ts: z.number().int(),
  payload_json: z.string(),
  /** A topic event's copy (issue 44): its topic, which a device's catch-up frame carries. */
  topic: TopicName.optional(),
});
export type InboxStoreEvent = z.infer<typeof InboxStoreEvent>;

/** `rt.inboxapi.store.<account>`: ingress keeps events of an inbox key before it answers. */
export const InboxStoreRequest = z.object({
  v: z.literal(1),
  key_id: z.string(),
  /** The key's inbox days: each event expires `days` after its ts (and once delivered). */
  days: InboxDays,
  events: z.array(InboxStoreEvent).min(1),
});
export type InboxStoreRequest = z.infer<typeof InboxStoreRequest>;

/**
 * One result per event, in order: its store sequence, or the refusal (`inbox_full`: the
 * recipient's inbox holds INBOX_MAX_PER_RECIPIENT events and none of them is read).
 */
export const InboxStoreResult = z.union([
  z.object({ seq: z.number().int().positive() }),
  z.object({
    error: z.object({ code: z.string(), message: z.string(), field: z.string().optional() }),
  }),
]);
export type InboxStoreResult = z.infer<typeof InboxStoreResult>;

export const InboxStoreReply = z.discriminatedUnion('ok', [
  z.object({ v: z.literal(1), ok: z.literal(true), results: z.array(InboxStoreResult) }),
  ErrorReply,
]);
export type InboxStoreReply = z.infer<typeof InboxStoreReply>;

/** `rt.inboxapi.query.<account>`: what edges and ingress ask of one recipient's inbox. */
export const InboxQuery = z.discriminatedUnion('op', [
  /** The unread count. */
  z.object({ v: z.literal(1), op: z.literal('unread'), recipient: Recipient }),
  /** One page, newest first, of events older than `before` (null: the newest). */
  z.object({
    v: z.literal(1),
    op: z.literal('history'),
    recipient: Recipient,
    before: InboxCursor.nullable(),
    limit: z.number().int().min(1).max(INBOX_MAX_PAGE),
  }),
  /** Marks events read (`ids`, or `all`); answers the new unread count and publishes it. */
  z.object({
    v: z.literal(1),
    op: z.literal('read'),
    recipient: Recipient,
    ids: z.array(EventId).min(1).max(INBOX_MAX_READ_IDS).optional(),
    all: z.literal(true).optional(),
  }),
  /** A device's catch-up: events with a sequence above `after`, oldest first. */
  z.object({
    v: z.literal(1),
    op: z.literal('after'),
    recipient: Recipient,
    after: z.number().int().min(0),
    limit: z.number().int().min(1).max(1000),
  }),
]);
export type InboxQuery = z.infer<typeof InboxQuery>;

/** An event in a catch-up (`after`) answer: its sequence and its payload's JSON text. */
export const InboxCatchUpEvent = z.object({
  seq: z.number().int().positive(),
  id: z.string(),
  ts: z.number(),
  payload_json: z.string(),
  /** A topic event's copy: its topic (issue 44). */
  topic: z.string().optional(),
});
export type InboxCatchUpEvent = z.infer<typeof InboxCatchUpEvent>;

export const InboxQueryReply = z.discriminatedUnion('ok', [
  z.object({
    v: z.literal(1),
    ok: z.literal(true),
    /** `unread` and `read`: the count after the operation. */
    unread: z.number().int().min(0).optional(),
    /** `history`: the page, and the cursor of the next (older) one, null at the end. */
    events: z.array(InboxEvent).optional(),
    next: InboxCursor.nullable().optional(),
    /** `after`: the catch-up events, oldest first. */
    catch_up: z.array(InboxCatchUpEvent).optional(),
  }),
  ErrorReply,
]);
export type InboxQueryReply = z.infer<typeof InboxQueryReply>;

/**
 * `rt.inboxapi.expire` (retention's weekly run): remove the inbox events past their expiry that
 * are settled (a socket had them, or the sender was told they failed). An event not yet delivered
 * is never removed: an event answered 200/202 reaches its recipient at least once or stays kept.
 */
export const InboxExpireRequest = z.object({ v: z.literal(1) });
export type InboxExpireRequest = z.infer<typeof InboxExpireRequest>;

export const InboxExpireReply = z.discriminatedUnion('ok', [
  z.object({ v: z.literal(1), ok: z.literal(true), removed: z.number().int().min(0) }),
  ErrorReply,
]);
export type InboxExpireReply = z.infer<typeof InboxExpireReply>;

/**
 * `rt.unread.<account>.<recipient>` (core NATS, published by the store after every change): the
 * recipient's unread count. Every edge holding a herald.v1 socket of the recipient forwards it as
 * `{"type":"inbox","unread"}`. Its shape matches the edge's per-recipient subscription
 * (`rt.*.<account>.<recipient>`), so it costs no subscription of its own.
 */
export const InboxUnreadNotice = z.object({
  v: z.literal(1),
  unread: z.number().int().min(0),
});
export type InboxUnreadNotice = z.infer<typeof InboxUnreadNotice>;

/** The HTTP paths of a server's inbox reads (ingress). */
export const INBOX_HISTORY_PATH = '/inbox/history';
export const INBOX_READ_PATH = '/inbox/read';

/**
 * `client`, as on `/notify`: checked against the key's (a web key also by its Origin). Optional
 * here: absent, the key's own client is assumed and only the Origin check of a web key applies.
 */
const HttpClient = z.enum(['web', 'mobile'], { error: 'client must be "web" or "mobile"' });

/** HTTP `POST /inbox/history` (a dispatch key): one page of a recipient's inbox. */
export const InboxHistoryBody = z.object({
  api_key: z.string(),
  client: HttpClient.optional(),
  recipient: Recipient,
  before: InboxCursor.nullable().optional(),
  limit: z.number().int().min(1).max(INBOX_MAX_PAGE).optional(),
});
export type InboxHistoryBody = z.infer<typeof InboxHistoryBody>;

/** HTTP `POST /inbox/read` (a dispatch key): mark `ids` or `all` read; answers `{"unread"}`. */
export const InboxReadBody = z.object({
  api_key: z.string(),
  client: HttpClient.optional(),
  recipient: Recipient,
  ids: z.array(EventId).min(1).max(INBOX_MAX_READ_IDS).optional(),
  all: z.literal(true).optional(),
});
export type InboxReadBody = z.infer<typeof InboxReadBody>;

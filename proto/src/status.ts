/**
 * Delivery status: what each service publishes when an event's outcome is known, the stream that
 * keeps those records until the status service has written them, and the status service's
 * request/reply API (queries and trimming). Never carries a payload.
 */
import { z } from 'zod';
import { ErrorReply } from './error-reply.js';
import { PushSpec } from './push.js';
import { REFUSALS_PAGE_MAX, RefusalView } from './refusals.js';
import { subjects } from './subjects.js';
import { TopicEventView } from './topics.js';

/** The statuses an event can reach, in the order they can happen. */
export const EventStatus = z.enum(['sent', 'pending', 'delivered', 'failed']);
export type EventStatus = z.infer<typeof EventStatus>;

/**
 * One status change, published fire-and-forget on `subjects.status(account)`:
 * - `sent`: ingress got an edge's confirmation of a live push (the 200 answer);
 * - `pending`: ingress stored the event in the offline queue (the 202 answer);
 * - `failed`: ingress could neither push nor store it (the 503 answer);
 * - `delivered`: an edge acked a queued event after the client's proof of receipt.
 * An edge does not know which key sent an event, so `key_id` and `recipient` may be absent on
 * `delivered`; the status service takes them from the event's earlier record.
 */
/**
 * Text Postgres can store: no NUL character. A record Postgres refuses would fail its writer
 * transaction again on every redelivery and hold back the records written with it.
 */
const StoredText = z
  .string()
  .refine((s) => !s.includes('\u0000'), 'must not contain a NUL character');
/** The latest instant a JavaScript Date (and so the writer's timestamptz) can hold, epoch ms. */
const MAX_DATE_MS = 8_640_000_000_000_000;

export const StatusEvent = z.object({
  v: z.literal(1),
  id: StoredText.min(1).max(64),
  account_id: StoredText.min(1),
  key_id: StoredText.min(1).optional(),
  recipient: StoredText.min(1).optional(),
  status: EventStatus,
  /** Epoch ms at which the status was reached. */
  at: z.number().int().nonnegative().max(MAX_DATE_MS),
  /** Why, for `failed` (an error code, never a payload). */
  reason: StoredText.max(200).optional(),
  /** On `delivered` from a socket with a `device`: the device that proved receipt (webhooks). */
  device: StoredText.min(1).max(128).optional(),
  /**
   * On `sent` and `pending` of a key created with `--webhook-payload` only: the event's payload as
   * the sender's JSON text, kept for that key's webhook bodies. Such a record travels alone (one
   * StatusEvent message, never in a StatusBatch), so a batch stays within NATS's max_payload.
   */
  payload_json: StoredText.max(1_048_576).optional(),
  /**
   * On `pending` of a key created with `--push-after-ms` only (issue 40): what the push fallback
   * sends if no socket proves the event in time. Such a record travels alone, as one with
   * `payload_json` does.
   */
  push: PushSpec.optional(),
  /** A topic event's copy (issue 44): the topic event's id, so its status counts its copies. */
  topic_id: StoredText.min(1).max(64).optional(),
});
export type StatusEvent = z.infer<typeof StatusEvent>;

/**
 * Most records one {@link StatusBatch} message may carry. The writer takes a message of up to this
 * many records into one transaction, so it stays far below Postgres's 65,535 bind parameters (9
 * per row).
 */
export const STATUS_BATCH_RECORDS_MAX = 1000;

/**
 * The status records one process produced in one event-loop turn, for one account, published as
 * one message on `subjects.status(account)` instead of one message each. The status writer reads
 * this form and the single {@link StatusEvent} form (older producers), and checks each record on
 * its own: a record that is not a valid StatusEvent is dropped, the others are written.
 */
export const StatusBatch = z.object({
  v: z.literal(1),
  records: z.array(StatusEvent).min(1).max(STATUS_BATCH_RECORDS_MAX),
});
export type StatusBatch = z.infer<typeof StatusBatch>;

/**
 * The envelope of a {@link StatusBatch} as the writer reads it: records unchecked, so that each is
 * parsed with {@link StatusEvent} on its own and one bad record does not refuse its neighbours.
 */
export const StatusBatchEnvelope = z.object({
  v: z.literal(1),
  records: z.array(z.unknown()).min(1).max(STATUS_BATCH_RECORDS_MAX),
});

export const STATUS_STREAM = 'HERALD_STATUS';
/** The status writer's durable pull consumer on {@link STATUS_STREAM}. */
export const STATUS_CONSUMER = 'status_writer';

export interface StatusStreamOptions {
  /** How long an unwritten record is kept while the writer is down, ms. Default 7 days. */
  maxAgeMs?: number;
  /** Byte cap of the stream; -1 for none. Default 1 GiB. */
  maxBytes?: number;
  replicas?: number;
}

const NS_PER_MS = 1_000_000;

/**
 * Work-queue retention: a record leaves the stream once the writer acked it (after its batch was
 * committed), so the stream only holds what Postgres does not have yet.
 */
export function statusStreamConfig(opts: StatusStreamOptions = {}) {
  return {
    name: STATUS_STREAM,
    subjects: [subjects.statusAll],
    retention: 'workqueue',
    storage: 'file',
    discard: 'old',
    max_age: (opts.maxAgeMs ?? 7 * 24 * 3600_000) * NS_PER_MS,
    max_bytes: opts.maxBytes ?? 1024 * 1024 * 1024,
    num_replicas: opts.replicas ?? 1,
  } as const;
}

/** Windows the counts and series cover, with the bucket width of their series. */
export const StatusWindow = z.enum(['hour', 'day', 'week']);
export type StatusWindow = z.infer<typeof StatusWindow>;
export const STATUS_WINDOWS: Record<StatusWindow, { spanMs: number; bucketMs: number }> = {
  hour: { spanMs: 3600_000, bucketMs: 60_000 },
  day: { spanMs: 24 * 3600_000, bucketMs: 30 * 60_000 },
  week: { spanMs: 7 * 24 * 3600_000, bucketMs: 4 * 3600_000 },
};

/** Most topics one `topics` query lists. */
export const TOPICS_PAGE_MAX = 200;
/** Most topic events one `fanouts` query lists (each costs one count of its copies). */
export const FANOUTS_PAGE_MAX = 50;

/** One topic of an account, as the dashboard lists it. */
export const TopicSummary = z.object({
  topic: z.string(),
  members: z.number().int(),
  created_at: z.string(),
});
export type TopicSummary = z.infer<typeof TopicSummary>;

/** One topic event with its progress: its status, members and copies by status. */
export const FanoutSummary = TopicEventView.extend({
  id: z.string(),
  status: EventStatus,
  created_at: z.string(),
});
export type FanoutSummary = z.infer<typeof FanoutSummary>;

/** Every query names the account: the status service never answers across accounts. */
export const StatusQuery = z.discriminatedUnion('op', [
  z.object({
    v: z.literal(1),
    op: z.literal('ids'),
    account_id: z.string().min(1),
    ids: z.array(z.string().min(1).max(64)).max(1000),
  }),
  z.object({
    v: z.literal(1),
    op: z.literal('counts'),
    account_id: z.string().min(1),
    key_id: z.string().min(1).optional(),
    window: StatusWindow,
    /** Epoch ms the window ends at; default now. */
    until: z.number().int().optional(),
  }),
  z.object({
    v: z.literal(1),
    op: z.literal('recent'),
    account_id: z.string().min(1),
    key_id: z.string().min(1).optional(),
    id: z.string().min(1).max(64).optional(),
    recipient: z.string().min(1).optional(),
    limit: z.number().int().min(1).max(200).default(50),
  }),
  z.object({
    v: z.literal(1),
    op: z.literal('last_used'),
    account_id: z.string().min(1),
  }),
  /** The account's topics with their member counts, by name, after `after` (issue 44). */
  z.object({
    v: z.literal(1),
    op: z.literal('topics'),
    account_id: z.string().min(1),
    after: z.string().min(1).max(128).optional(),
    limit: z.number().int().min(1).max(TOPICS_PAGE_MAX).default(100),
  }),
  /** The account's newest topic events, each with its copies counted by status (issue 44). */
  z.object({
    v: z.literal(1),
    op: z.literal('fanouts'),
    account_id: z.string().min(1),
    limit: z.number().int().min(1).max(FANOUTS_PAGE_MAX).default(20),
  }),
  /** One key's recent refusals, newest first (issue 45, proto/refusals.ts). */
  z.object({
    v: z.literal(1),
    op: z.literal('refusals'),
    account_id: z.string().min(1),
    key_id: z.string().min(1).max(64),
    limit: z.number().int().min(1).max(REFUSALS_PAGE_MAX).default(50),
  }),
]);
export type StatusQuery = z.input<typeof StatusQuery>;

/** One event's current status and the time it reached each. */
export const EventStatusView = z.object({
  id: z.string(),
  status: z.union([EventStatus, z.literal('unknown')]),
  key_id: z.string().nullable().optional(),
  recipient: z.string().nullable().optional(),
  sent_at: z.string().nullable().optional(),
  queued_at: z.string().nullable().optional(),
  delivered_at: z.string().nullable().optional(),
  failed_at: z.string().nullable().optional(),
  reason: z.string().nullable().optional(),
  /** Push fallback (issue 40): when it first reached a subscription, and how many it reached. */
  pushed: z
    .object({ at: z.string(), subscriptions: z.number().int().nonnegative() })
    .nullable()
    .optional(),
  /** A topic event (issue 44): its members and its copies by status (each copy has its own id). */
  topic: TopicEventView.optional(),
});
export type EventStatusView = z.infer<typeof EventStatusView>;

export const StatusCounts = z.object({
  sent: z.number().int(),
  pending: z.number().int(),
  delivered: z.number().int(),
  failed: z.number().int(),
});
export type StatusCounts = z.infer<typeof StatusCounts>;

export const StatusReply = z.discriminatedUnion('ok', [
  z.object({
    v: z.literal(1),
    ok: z.literal(true),
    events: z.array(EventStatusView).optional(),
    counts: StatusCounts.optional(),
    series: z.array(StatusCounts.extend({ t: z.string() })).optional(),
    last_used: z.record(z.string(), z.string()).optional(),
    topics: z.array(TopicSummary).optional(),
    fanouts: z.array(FanoutSummary).optional(),
    refusals: z.array(RefusalView).optional(),
  }),
  ErrorReply,
]);
export type StatusReply = z.infer<typeof StatusReply>;

/** `subjects.statusTrim` request: delete status rows older than the service's retention window. */
export const StatusTrimRequest = z.object({ v: z.literal(1) });
export type StatusTrimRequest = z.infer<typeof StatusTrimRequest>;
export const StatusTrimReply = z.discriminatedUnion('ok', [
  z.object({
    v: z.literal(1),
    ok: z.literal(true),
    events_deleted: z.number().int(),
    rollups_deleted: z.number().int(),
  }),
  ErrorReply,
]);
export type StatusTrimReply = z.infer<typeof StatusTrimReply>;

/** The HTTP path of the sender's status lookup. */
export const STATUS_PATH = '/events/status';

/** `POST /events/status` body: the key in the body, as for /notify. */
export const StatusLookupRequest = z.object({
  api_key: z.string({ error: 'api_key is required: send the key as a JSON string' }).min(1),
  ids: z
    .array(
      z
        .string()
        .min(1, 'each id must be a non-empty string')
        .max(64, 'an id has at most 64 characters'),
      {
        error: 'ids is required: a JSON array of event ids that /notify answered',
      },
    )
    .min(1, 'ids must name at least one event id'),
});
export type StatusLookupRequest = z.infer<typeof StatusLookupRequest>;

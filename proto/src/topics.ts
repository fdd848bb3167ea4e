import { z } from 'zod';
import { VerifiedKey } from './auth.js';
import { ErrorReply } from './error-reply.js';
import { PushContent } from './push.js';
import { assertToken } from './subjects.js';
import {
  TOPIC_EXCLUDE_MAX,
  TOPIC_MEMBERS_PAGE_MAX,
  TOPIC_MEMBERS_PER_CALL_MAX,
  TOPIC_NAME,
} from './topic-names.js';
import { UUID_V4 } from './uuid.js';

export { TOPIC_EXCLUDE_MAX, TOPIC_MEMBERS_PAGE_MAX, TOPIC_MEMBERS_PER_CALL_MAX, TOPIC_NAME };

/**
 * Topics (issue 44): an account's named sets of recipients, and one event sent to every member,
 * each member's copy as durable as a direct event. Membership lives in the status service's
 * Postgres and is reached by one request subject, {@link TOPIC_API_SUBJECT}; ingress takes the
 * HTTP routes and, for `POST /notify` with `topic`, snapshots the membership there into chunks
 * and publishes one work item per chunk ({@link FanoutItem}) into {@link FANOUT_STREAM}, which
 * every ingress instance's fan-out workers drain. docs/api.md, "Topics".
 */

/** The request subject of every topic operation; the status service answers it. */
export const TOPIC_API_SUBJECT = 'rt.topicapi.request';

export const TopicName = z
  .string({ error: 'topic must be a string' })
  .regex(
    TOPIC_NAME,
    'topic must be 1 to 128 characters of A-Z, a-z, 0-9, _, ., : and - (e.g. project:42.followers)',
  );

export const TopicRecipient = z
  .string({ error: 'each recipient must be a string holding a UUID v4' })
  .regex(UUID_V4, 'each recipient must be a UUID v4, the id you dispatch to')
  .transform((s) => s.toLowerCase());

export const TopicRecipients = z
  .array(TopicRecipient, { error: 'recipients must be an array of recipient UUIDs' })
  .min(1, 'recipients must name at least one recipient')
  .max(
    TOPIC_MEMBERS_PER_CALL_MAX,
    `recipients must name at most ${TOPIC_MEMBERS_PER_CALL_MAX} recipients per call: split the list over several calls`,
  );

/** The body of `PUT` and `DELETE {base}/topics/{topic}/members`. */
export const TopicMembersBody = z.object({
  api_key: z.string({ error: 'api_key is required: put your Herald API key in the JSON body' }),
  recipients: TopicRecipients,
});
export type TopicMembersBody = z.infer<typeof TopicMembersBody>;

const Account = z.string().min(1);
const EventId = z.string().min(1).max(64);

export const TopicRequest = z.discriminatedUnion('op', [
  z.object({
    v: z.literal(1),
    op: z.enum(['add', 'remove']),
    account_id: Account,
    topic: TopicName,
    recipients: TopicRecipients,
  }),
  z.object({
    v: z.literal(1),
    op: z.literal('list'),
    account_id: Account,
    topic: TopicName,
    /** The last recipient of the previous page. */
    cursor: TopicRecipient.optional(),
    limit: z.number().int().min(1).max(TOPIC_MEMBERS_PAGE_MAX),
  }),
  z.object({ v: z.literal(1), op: z.literal('delete'), account_id: Account, topic: TopicName }),
  /** The membership at acceptance, kept in chunks under the topic event's id (idempotent per id). */
  z.object({
    v: z.literal(1),
    op: z.literal('snapshot'),
    account_id: Account,
    topic: TopicName,
    id: EventId,
    exclude: z.array(TopicRecipient).max(TOPIC_EXCLUDE_MAX),
    chunk_size: z.number().int().min(1).max(TOPIC_MEMBERS_PER_CALL_MAX),
  }),
  /** One chunk's recipients, as the snapshot kept them. */
  z.object({
    v: z.literal(1),
    op: z.literal('chunk'),
    account_id: Account,
    id: EventId,
    chunk: z.number().int().nonnegative(),
  }),
]);
export type TopicRequest = z.input<typeof TopicRequest>;

const ok = <T extends z.ZodRawShape>(shape: T) =>
  z.discriminatedUnion('ok', [
    z.object({ v: z.literal(1), ok: z.literal(true), ...shape }),
    ErrorReply,
  ]);

/** `add`, `remove`: how many rows changed, and the topic's members after. */
export const TopicChangeReply = ok({ changed: z.number().int(), members: z.number().int() });
export const TopicListReply = ok({
  recipients: z.array(z.string()),
  members: z.number().int(),
  next_cursor: z.string().nullable(),
});
export const TopicDeleteReply = ok({ deleted: z.boolean(), members: z.number().int() });
export const TopicSnapshotReply = ok({ members: z.number().int(), chunks: z.number().int() });
export const TopicChunkReply = ok({ topic: z.string(), recipients: z.array(z.string()) });

/** The fan-out's work queue: one message per chunk of members. */
export const FANOUT_STREAM = 'HERALD_FANOUT';
/** The one durable consumer every ingress instance's workers pull from. */
export const FANOUT_CONSUMER = 'herald_fanout';
export const fanoutSubjects = {
  /** Where a topic event's chunks are published (account from the verified key). */
  chunk: (account: string) => `rt.fanout.${assertToken('account', account)}`,
  all: 'rt.fanout.>',
  pattern: 'rt.fanout.*',
} as const;

/**
 * One chunk of a topic event: everything a worker needs to deliver a copy to each of the chunk's
 * members (read from the snapshot by `chunk`), with the key as it was verified at acceptance.
 */
export const FanoutItem = z.object({
  v: z.literal(1),
  /** The topic event's id; each copy's id is derived from it and the recipient. */
  id: EventId,
  topic: TopicName,
  chunk: z.number().int().nonnegative(),
  /** Epoch ms of acceptance: every copy carries it. */
  ts: z.number().int().nonnegative(),
  key: VerifiedKey,
  /** The sender's payload, its JSON text untouched. */
  payload_json: z.string(),
  push: PushContent.optional(),
});
export type FanoutItem = z.infer<typeof FanoutItem>;

/** The counts a topic event's status carries: its copies by status, and its members. */
export const TopicEventView = z.object({
  topic: z.string(),
  members: z.number().int(),
  sent: z.number().int(),
  pending: z.number().int(),
  delivered: z.number().int(),
  failed: z.number().int(),
});
export type TopicEventView = z.infer<typeof TopicEventView>;

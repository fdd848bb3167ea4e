import type { EventStatus } from '@herald/proto';
import type { ColumnType, Generated, Selectable } from 'kysely';

type Timestamp = ColumnType<Date, Date, Date>;

/** One row per event: the time it reached each status. Never its payload. */
export interface StatusEventsTable {
  id: string;
  account_id: string;
  /** The key that sent it; '' while only an edge's `delivered` record is known. */
  key_id: string;
  recipient: string | null;
  sent_at: Date | null;
  queued_at: Date | null;
  delivered_at: Date | null;
  failed_at: Date | null;
  /** The error code of a failure. */
  reason: string | null;
  /** When the first record of this event was written (what trimming and "recent" go by). */
  created_at: Timestamp;
  /**
   * An opted-in key's payload (`--webhook-payload`), JSON text, for its later webhook bodies;
   * null otherwise. Read only where a body needs it: rows are loaded without it.
   */
  payload_json: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the push fallback first reached a subscription for it (0005); read by /events/status only. */
  pushed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** How many subscriptions got it. */
  pushed_count: ColumnType<number | null, number | null | undefined, number | null>;
  /** A topic event's copy (0007): the topic event's id. */
  topic_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** Transitions per account, key, status and minute: what the charts and counts read. */
export interface StatusRollupTable {
  account_id: string;
  key_id: string;
  status: EventStatus;
  minute: Timestamp;
  count: number;
  /** The latest transition counted in this row (a key's "last used"). */
  last_at: Timestamp;
}

/** Inbox mode: one kept event of an inbox key for one recipient (migration 0002). */
export interface InboxEventsTable {
  seq: ColumnType<string, never, never>;
  account_id: string;
  recipient: string;
  id: string;
  /** Epoch ms; bigint, read back as a string. */
  ts: ColumnType<string, number, number>;
  payload_json: string;
  read_at: Date | null;
  expires_at: Date;
  delivered: ColumnType<boolean, boolean | undefined, boolean>;
  /** A topic event's copy (migration 0009): its topic, for the device's catch-up frame. */
  topic: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A webhook endpoint of an account (migration 0003). */
export interface WebhookEndpointsTable {
  id: string;
  account_id: string;
  url: string;
  events: string[];
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_until: Date | null;
  created_at: ColumnType<Date, Date | undefined, never>;
  disabled_at: Date | null;
  disabled_reason: string | null;
  failing_since: Date | null;
  pending: ColumnType<number, number | undefined, number>;
}

/** One message waiting to be sent to one endpoint (the outbox), or failed for good. */
export interface WebhookMessagesTable {
  seq: ColumnType<string, never, never>;
  endpoint_id: string;
  msg_id: string;
  type: string;
  body: string;
  transition_at: Date;
  next_at: ColumnType<Date, Date | undefined, Date>;
  leased_until: Date | null;
  /** The sender holding the lease (0004). */
  leased_by: string | null;
  attempts: ColumnType<number, number | undefined, number>;
  failed_at: Date | null;
}

/** One attempt to send one message; the newest few per endpoint are kept. */
export interface WebhookAttemptsTable {
  seq: ColumnType<string, never, never>;
  endpoint_id: string;
  at: Date;
  msg_id: string;
  type: string;
  http_status: number | null;
  error: string | null;
  latency_ms: number;
}

/** An account's Web Push (VAPID) credentials (migration 0005). */
export interface PushCredentialsTable {
  account_id: string;
  vapid_public_key: string;
  vapid_private_sealed: string;
  subject: string;
  created_at: ColumnType<Date, Date | undefined, Date>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

/** One Web Push subscription of one recipient. */
export interface PushSubscriptionsTable {
  id: string;
  account_id: string;
  key_id: string;
  recipient: string;
  kind: string;
  device: string | null;
  /** Web Push: the endpoint URL; FCM and APNs: `kind:token` (0006). */
  endpoint: string;
  /** Web Push only (null for FCM and APNs). */
  p256dh: string | null;
  auth: string | null;
  created_at: ColumnType<Date, Date | undefined, Date>;
  last_success_at: Date | null;
}

/** An account's FCM service account or APNs token key (migration 0006). */
export interface PushProviderCredentialsTable {
  account_id: string;
  provider: string;
  settings: ColumnType<unknown, string, string>;
  private_sealed: string;
  created_at: ColumnType<Date, Date | undefined, Date>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

/** One event waiting for its push (or for the push's retry). */
export interface PushDueTable {
  event_id: string;
  account_id: string;
  key_id: string;
  recipient: string;
  at: Date;
  due_at: Date;
  expires_at: Date;
  /** The record's PushSpec (jsonb). */
  spec: ColumnType<unknown, string, string>;
  attempts: ColumnType<number, number | undefined, number>;
  leased_until: Date | null;
  leased_by: string | null;
}

/** An event a subscription got. */
export interface PushSentTable {
  event_id: string;
  subscription_id: string;
  at: ColumnType<Date, Date | undefined, Date>;
}

/** A proof held back before its event's pending record (0005). */
export interface PushProofsTable {
  event_id: string;
  account_id: string;
  at: ColumnType<Date, Date | undefined, Date>;
}

export interface StatusDb {
  status_events: StatusEventsTable;
  status_rollup: StatusRollupTable;
  inbox_events: InboxEventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_messages: WebhookMessagesTable;
  webhook_attempts: WebhookAttemptsTable;
  push_credentials: PushCredentialsTable;
  push_provider_credentials: PushProviderCredentialsTable;
  push_subscriptions: PushSubscriptionsTable;
  push_due: PushDueTable;
  push_sent: PushSentTable;
  push_proofs: PushProofsTable;
  topics: TopicsTable;
  topic_members: TopicMembersTable;
  topic_fanouts: TopicFanoutsTable;
  topic_fanout_chunks: TopicFanoutChunksTable;
  key_refusals: KeyRefusalsTable;
}

/** A key's recent refusals (migration 0009, issue 45); '' for no field or Origin. */
export interface KeyRefusalsTable {
  id: Generated<string>;
  account_id: string;
  key_id: string;
  status: number;
  code: string;
  field: string;
  origin: string;
  route: string;
  count: number;
  first_at: Date;
  last_at: Date;
}

/** An account's topic (migration 0007); `members` is kept by every change of its membership. */
export interface TopicsTable {
  account_id: string;
  topic: string;
  members: number;
  created_at: ColumnType<Date, Date | undefined, Date>;
}

export interface TopicMembersTable {
  account_id: string;
  topic: string;
  recipient: string;
  added_at: ColumnType<Date, Date | undefined, Date>;
}

/** A topic event's snapshot: its members at acceptance, in `chunks` rows of chunk size. */
export interface TopicFanoutsTable {
  id: string;
  account_id: string;
  topic: string;
  members: number;
  chunks: number;
  created_at: ColumnType<Date, Date | undefined, Date>;
}

export interface TopicFanoutChunksTable {
  fanout_id: string;
  chunk: number;
  recipients: string[];
}

/** An event's row as the writer and the queries read it: without the (large, rare) payload. */
export type StatusEventRow = Omit<
  Selectable<StatusEventsTable>,
  'payload_json' | 'pushed_at' | 'pushed_count' | 'topic_id'
>;
/** The columns of {@link StatusEventRow}, what every read of a row selects. */
export const STATUS_EVENT_COLUMNS = [
  'id',
  'account_id',
  'key_id',
  'recipient',
  'sent_at',
  'queued_at',
  'delivered_at',
  'failed_at',
  'reason',
  'created_at',
] as const satisfies readonly (keyof StatusEventRow)[];
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type PushSubscriptionRow = Selectable<PushSubscriptionsTable>;

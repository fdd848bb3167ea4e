import type { EventStatus } from '@herald/proto';
import type { ColumnType, Selectable } from 'kysely';

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
}

export interface StatusDb {
  status_events: StatusEventsTable;
  status_rollup: StatusRollupTable;
  inbox_events: InboxEventsTable;
}

export type StatusEventRow = Selectable<StatusEventsTable>;

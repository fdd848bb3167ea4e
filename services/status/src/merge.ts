import { type EventStatus, isDashboardRecipient, type StatusEvent } from '@herald/proto';
import type { StatusEventRow } from './db-schema.js';

/** The column holding the time an event reached each status. */
export const STATUS_COLUMN = {
  sent: 'sent_at',
  pending: 'queued_at',
  delivered: 'delivered_at',
  failed: 'failed_at',
} as const satisfies Record<EventStatus, keyof StatusEventRow>;

const MINUTE_MS = 60_000;

export interface RollupIncrement {
  account_id: string;
  key_id: string;
  status: EventStatus;
  minute: Date;
  count: number;
  last_at: Date;
}

/** A status an event reached for the first time in this batch: what a webhook is sent for. */
export interface FirstTransition {
  /** The event's row as the batch leaves it (the same object as in `rows`). */
  row: StatusEventRow;
  status: EventStatus;
  at: Date;
  /** `delivered`: the device that proved receipt, when the record named one. */
  device?: string | undefined;
  /** An opted-in key's payload, when this record carried it. */
  payloadJson?: string | undefined;
}

export interface Merged {
  /** The rows to upsert: each event touched by the batch, whole. */
  rows: StatusEventRow[];
  /** Transitions reached for the first time, summed per account, key, status and minute. */
  rollup: RollupIncrement[];
  /** Indexes of records held back: a `delivered` whose event has no key yet (retry later). */
  deferred: number[];
  /** Every first transition, in the order the records were merged. */
  firsts: FirstTransition[];
}

/**
 * Folds a batch of status records into the current rows of their events. A status counts in the
 * rollup only the first time an event reaches it, so a record seen twice (a redelivery, an edge
 * acking a redelivered event again) changes nothing. A record naming another account than the
 * event's row is ignored: ids never move between accounts. A record of an event to the account's
 * dashboard recipient (auth's billing notices to the dashboard) is dropped: those are Herald's own
 * messages, not the customer's events, and no key of the customer's sent them (`/notify` refuses
 * that recipient to every key), so counting them would inflate the customer's figures.
 *
 * @param existing the rows of the batch's ids as they are in Postgres (locked by the caller)
 * @param acceptOrphan for each record, whether a keyless `delivered` may be written as is
 */
export function mergeBatch(
  records: readonly StatusEvent[],
  existing: ReadonlyMap<string, StatusEventRow>,
  acceptOrphan: (index: number) => boolean,
  now: Date,
): Merged {
  const rows = new Map<string, StatusEventRow>();
  const rollup = new Map<string, RollupIncrement>();
  const deferred: number[] = [];
  const firsts: FirstTransition[] = [];
  // Records with a key first, so a batch holding both `pending` and `delivered` of one event
  // counts the delivery under the sending key whatever order they arrived in.
  const order = records.map((_, i) => i).sort((a, b) => rank(records[a]) - rank(records[b]));
  for (const i of order) {
    const rec = records[i] as StatusEvent;
    if (rec.recipient !== undefined && isDashboardRecipient(rec.account_id, rec.recipient))
      continue;
    const found = rows.get(rec.id) ?? existing.get(rec.id);
    if (found && found.account_id !== rec.account_id) continue;
    const row: StatusEventRow =
      rows.get(rec.id) ??
      (found
        ? { ...found }
        : {
            id: rec.id,
            account_id: rec.account_id,
            key_id: '',
            recipient: null,
            sent_at: null,
            queued_at: null,
            delivered_at: null,
            failed_at: null,
            reason: null,
            created_at: now,
          });
    if (row.key_id === '' && rec.key_id === undefined && !acceptOrphan(i)) {
      deferred.push(i);
      continue;
    }
    if (row.key_id === '' && rec.key_id !== undefined) row.key_id = rec.key_id;
    if (row.recipient === null && rec.recipient !== undefined) row.recipient = rec.recipient;
    if (rec.reason !== undefined && rec.status === 'failed') row.reason = rec.reason;
    const column = STATUS_COLUMN[rec.status];
    if (row[column] === null) {
      const at = new Date(rec.at);
      row[column] = at;
      count(rollup, row, rec.status, at);
      firsts.push({
        row,
        status: rec.status,
        at,
        device: rec.device,
        payloadJson: rec.payload_json,
      });
    }
    rows.set(rec.id, row);
  }
  return { rows: [...rows.values()], rollup: [...rollup.values()], deferred, firsts };
}

function rank(rec: StatusEvent | undefined): number {
  return rec?.key_id === undefined ? 1 : 0;
}

function count(
  rollup: Map<string, RollupIncrement>,
  row: StatusEventRow,
  status: EventStatus,
  at: Date,
): void {
  const minute = new Date(Math.floor(at.getTime() / MINUTE_MS) * MINUTE_MS);
  const k = `${row.account_id}|${row.key_id}|${status}|${minute.getTime()}`;
  const entry = rollup.get(k);
  if (entry) {
    entry.count++;
    if (at > entry.last_at) entry.last_at = at;
  } else {
    rollup.set(k, {
      account_id: row.account_id,
      key_id: row.key_id,
      status,
      minute,
      count: 1,
      last_at: at,
    });
  }
}

/** An event's current status: the furthest it got. */
export function currentStatus(
  row: Pick<StatusEventRow, 'sent_at' | 'queued_at' | 'delivered_at' | 'failed_at'>,
): EventStatus {
  if (row.failed_at) return 'failed';
  if (row.delivered_at) return 'delivered';
  if (row.queued_at) return 'pending';
  return 'sent';
}

import type { StatusEvent } from '@herald/proto';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { StatusDb, StatusEventRow } from './db-schema.js';
import { mergeBatch, type RollupIncrement } from './merge.js';

export interface BatchResult {
  /** Event rows inserted or updated. */
  rows: number;
  /** Records held back (see mergeBatch): the caller redelivers them later. */
  deferred: number[];
}

/**
 * Writes one batch in one transaction and three statements, whatever its size: lock the batch's
 * existing rows, upsert the merged rows, add the rollup increments. Rows are locked in id order so
 * two writers never deadlock on the same pair of events. Each statement takes one array per
 * column (`= any($1)`, `unnest(...)`), not a parameter per value: a batch of 1,000 events was
 * 10,000 bind parameters, each one parsed, planned and typed by Postgres and serialised by pg.
 */
export async function writeBatch(
  db: Kysely<StatusDb>,
  records: readonly StatusEvent[],
  acceptOrphan: (index: number) => boolean,
): Promise<BatchResult> {
  const ids = [...new Set(records.map((r) => r.id))].sort();
  return db.transaction().execute(async (trx) => {
    const current = ids.length
      ? (
          await sql<StatusEventRow>`select * from status_events where id = any(${ids}::text[]) order by id for update`.execute(
            trx,
          )
        ).rows
      : [];
    const existing = new Map<string, StatusEventRow>(current.map((r) => [r.id, r]));
    const merged = mergeBatch(records, existing, acceptOrphan, new Date());
    if (merged.rows.length > 0) await upsertRows(trx, merged.rows);
    if (merged.rollup.length > 0) await addRollup(trx, merged.rollup);
    return { rows: merged.rows.length, deferred: merged.deferred };
  });
}

/** The events' rows, whole: inserted, or replacing what the batch's merge started from. */
async function upsertRows(trx: Transaction<StatusDb>, rows: readonly StatusEventRow[]) {
  const col = <K extends keyof StatusEventRow>(k: K) => rows.map((r) => r[k]);
  await sql`
    insert into status_events
      (id, account_id, key_id, recipient, sent_at, queued_at, delivered_at, failed_at, reason, created_at)
    select * from unnest(
      ${col('id')}::text[], ${col('account_id')}::text[], ${col('key_id')}::text[],
      ${col('recipient')}::text[], ${col('sent_at')}::timestamptz[], ${col('queued_at')}::timestamptz[],
      ${col('delivered_at')}::timestamptz[], ${col('failed_at')}::timestamptz[],
      ${col('reason')}::text[], ${col('created_at')}::timestamptz[])
    on conflict (id) do update set
      key_id = excluded.key_id, recipient = excluded.recipient, sent_at = excluded.sent_at,
      queued_at = excluded.queued_at, delivered_at = excluded.delivered_at,
      failed_at = excluded.failed_at, reason = excluded.reason`.execute(trx);
}

/** Transitions counted per account, key, status and minute, added to what the rollup holds. */
async function addRollup(trx: Transaction<StatusDb>, rollup: readonly RollupIncrement[]) {
  const col = <K extends keyof RollupIncrement>(k: K) => rollup.map((r) => r[k]);
  await sql`
    insert into status_rollup (account_id, key_id, status, minute, count, last_at)
    select * from unnest(
      ${col('account_id')}::text[], ${col('key_id')}::text[], ${col('status')}::text[],
      ${col('minute')}::timestamptz[], ${col('count')}::integer[], ${col('last_at')}::timestamptz[])
    on conflict (account_id, key_id, status, minute) do update set
      count = status_rollup.count + excluded.count,
      last_at = greatest(status_rollup.last_at, excluded.last_at)`.execute(trx);
}

import type { StatusEvent } from '@herald/proto';
import { type Kysely, sql } from 'kysely';
import { STATUS_EVENT_COLUMNS, type StatusDb, type StatusEventRow } from './db-schema.js';
import { markDelivered } from './inbox/queries.js';
import { mergeBatch } from './merge.js';

export interface BatchResult {
  /** Event rows inserted or updated. */
  rows: number;
  /** Records held back (see mergeBatch): the caller redelivers them later. */
  deferred: number[];
}

/**
 * Writes one batch in one transaction and four statements, whatever its size: lock the batch's
 * existing rows, upsert the merged rows, add the rollup increments. Rows are locked in id order so
 * two writers never deadlock on the same pair of events.
 */
export async function writeBatch(
  db: Kysely<StatusDb>,
  records: readonly StatusEvent[],
  acceptOrphan: (index: number) => boolean,
): Promise<BatchResult> {
  const ids = [...new Set(records.map((r) => r.id))].sort();
  return db.transaction().execute(async (trx) => {
    const current = ids.length
      ? await trx
          .selectFrom('status_events')
          .select(STATUS_EVENT_COLUMNS)
          .where('id', 'in', ids)
          .orderBy('id')
          .forUpdate()
          .execute()
      : [];
    const existing = new Map<string, StatusEventRow>(current.map((r) => [r.id, r]));
    const merged = mergeBatch(records, existing, acceptOrphan, new Date());
    if (merged.rows.length > 0) {
      await trx
        .insertInto('status_events')
        .values(merged.rows)
        .onConflict((oc) =>
          oc.column('id').doUpdateSet((eb) => ({
            key_id: eb.ref('excluded.key_id'),
            recipient: eb.ref('excluded.recipient'),
            sent_at: eb.ref('excluded.sent_at'),
            queued_at: eb.ref('excluded.queued_at'),
            delivered_at: eb.ref('excluded.delivered_at'),
            failed_at: eb.ref('excluded.failed_at'),
            reason: eb.ref('excluded.reason'),
          })),
        )
        .execute();
    }
    if (merged.rollup.length > 0) {
      await trx
        .insertInto('status_rollup')
        .values(merged.rollup)
        .onConflict((oc) =>
          oc.columns(['account_id', 'key_id', 'status', 'minute']).doUpdateSet({
            count: sql`status_rollup.count + excluded.count`,
            last_at: sql`greatest(status_rollup.last_at, excluded.last_at)`,
          }),
        )
        .execute();
    }
    // Inbox mode: a kept event a socket had (or whose sender was told it failed) may now expire.
    await markDelivered(
      trx,
      records
        .filter((r) => r.status !== 'pending')
        .map((r) => ({ account: r.account_id, id: r.id })),
    );
    return { rows: merged.rows.length, deferred: merged.deferred };
  });
}

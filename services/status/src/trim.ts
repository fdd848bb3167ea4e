import { type Kysely, sql } from 'kysely';
import type { StatusDb } from './db-schema.js';

/** Rows deleted per statement, so a large trim never holds one long lock. */
const TRIM_CHUNK = 10_000;

export interface TrimResult {
  events_deleted: number;
  rollups_deleted: number;
}

/** Deletes events first seen, rollup minutes and failed webhook messages, before `cutoff`. */
export async function trimBefore(db: Kysely<StatusDb>, cutoff: Date): Promise<TrimResult> {
  let events = 0;
  for (;;) {
    const r = await sql`delete from status_events where id in (
        select id from status_events where created_at < ${cutoff} limit ${TRIM_CHUNK})`.execute(db);
    const n = Number(r.numAffectedRows ?? 0);
    events += n;
    if (n < TRIM_CHUNK) break;
  }
  const r = await db.deleteFrom('status_rollup').where('minute', '<', cutoff).executeTakeFirst();
  // Webhook messages kept as failed (their schedule exhausted) go with the window too.
  await db.deleteFrom('webhook_messages').where('failed_at', '<', cutoff).execute();
  // Push: what each subscription got, and proofs whose pending record never came.
  await db.deleteFrom('push_sent').where('at', '<', cutoff).execute();
  await db.deleteFrom('push_proofs').where('at', '<', cutoff).execute();
  // Topics: a fan-out's snapshot lives as long as its copies' status rows.
  await sql`delete from topic_fanout_chunks c using topic_fanouts f
    where c.fanout_id = f.id and f.created_at < ${cutoff}`.execute(db);
  await db.deleteFrom('topic_fanouts').where('created_at', '<', cutoff).execute();
  return { events_deleted: events, rollups_deleted: Number(r.numDeletedRows) };
}

import type { StatusEvent } from '@herald/proto';
import { type Kysely, sql } from 'kysely';
import { STATUS_EVENT_COLUMNS, type StatusDb, type StatusEventRow } from './db-schema.js';
import { markDelivered } from './inbox/queries.js';
import { mergeBatch } from './merge.js';
import { decidePushes } from './push/due.js';
import type { EnqueueResult } from './webhooks/outbox.js';
import { enqueueTransitions, transitionsOf } from './webhooks/transitions.js';

export interface BatchResult {
  /** Event rows inserted or updated. */
  rows: number;
  /** Records held back (see mergeBatch): the caller redelivers them later. */
  deferred: number[];
  /** Webhook messages the batch's first transitions enqueued, and those the queue bound refused. */
  webhooks: EnqueueResult;
  /** The earliest push the batch made due, if any (the push sender arms its timer for it). */
  pushDue: Date | undefined;
}

export interface BatchOptions {
  /** WEBHOOK_ENDPOINT_QUEUE_MAX. */
  webhookQueueMax: number;
}

/**
 * Writes one batch in one transaction and a few statements, whatever its size: lock the batch's
 * existing rows, upsert the merged rows, add the rollup increments, and enqueue a webhook message
 * for each first transition an endpoint subscribes to (one query when the batch's accounts have
 * none). Rows are locked in id order so two writers never deadlock on the same pair of events; the
 * outbox insert is in the same transaction, so a transition is enqueued exactly once.
 */
export async function writeBatch(
  db: Kysely<StatusDb>,
  records: readonly StatusEvent[],
  acceptOrphan: (index: number) => boolean,
  opts: BatchOptions,
): Promise<BatchResult> {
  const ids = [...new Set(records.map((r) => r.id))].sort();
  return db.transaction().execute(async (trx) => {
    const current = ids.length
      ? await trx
          .selectFrom('status_events')
          .select(STATUS_EVENT_COLUMNS)
          .select(sql<boolean>`payload_json is not null`.as('has_payload'))
          .where('id', 'in', ids)
          .orderBy('id')
          .forUpdate()
          .execute()
      : [];
    const existing = new Map<string, StatusEventRow>();
    const withPayload = new Set<string>();
    for (const { has_payload, ...row } of current) {
      existing.set(row.id, row);
      if (has_payload) withPayload.add(row.id);
    }
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
    await keepPayloads(trx, records, withPayload);
    await keepTopics(trx, records);
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
    const pushDue = await decidePushes(trx, records, merged.firsts, merged.deferred);
    // Last: the endpoints' rows it locks (their pending counts) are held the shortest time.
    const webhooks = await enqueueTransitions(
      trx,
      transitionsOf(merged.firsts),
      withPayload,
      opts.webhookQueueMax,
    );
    return { rows: merged.rows.length, deferred: merged.deferred, webhooks, pushDue };
  });
}

/**
 * A topic event's copy names its topic event (issue 44): kept on the copy's row, so the topic
 * event's status counts its copies. Only a copy's records carry it; a batch without one runs
 * nothing more.
 */
async function keepTopics(trx: Kysely<StatusDb>, records: readonly StatusEvent[]): Promise<void> {
  const carried = new Map<string, { account: string; topic: string }>();
  for (const r of records) {
    if (r.topic_id !== undefined) carried.set(r.id, { account: r.account_id, topic: r.topic_id });
  }
  if (carried.size === 0) return;
  const values = [...carried.values()];
  await sql`update status_events s set topic_id = c.topic
    from unnest(${[...carried.keys()]}::text[], ${values.map((c) => c.account)}::text[],
      ${values.map((c) => c.topic)}::text[]) as c(id, account, topic)
    where s.id = c.id and s.account_id = c.account and s.topic_id is null`.execute(trx);
}

/**
 * An opted-in key's payload, carried by its `sent` or `pending` record, is kept on the event's row
 * for the bodies of its later transitions. Such records are rare (they travel alone), so this is
 * its own statement, run only when one is in the batch.
 */
async function keepPayloads(
  trx: Kysely<StatusDb>,
  records: readonly StatusEvent[],
  withPayload: Set<string>,
): Promise<void> {
  const carried = new Map<string, { account: string; json: string }>();
  for (const r of records) {
    if (r.payload_json !== undefined && !withPayload.has(r.id))
      carried.set(r.id, { account: r.account_id, json: r.payload_json });
  }
  if (carried.size === 0) return;
  await sql`update status_events s set payload_json = c.json
    from unnest(${[...carried.keys()]}::text[], ${[...carried.values()].map((c) => c.account)}::text[],
      ${[...carried.values()].map((c) => c.json)}::text[]) as c(id, account, json)
    where s.id = c.id and s.account_id = c.account and s.payload_json is null`.execute(trx);
  for (const id of carried.keys()) withPayload.add(id);
}

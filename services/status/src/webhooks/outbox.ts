import { type Kysely, sql } from 'kysely';
import type { StatusDb } from '../db-schema.js';

/** One message to put in the outbox. */
export interface OutboxMessage {
  endpointId: string;
  /** The `webhook-id`. */
  msgId: string;
  type: string;
  body: string;
  transitionAt: Date;
}

export interface EnqueueResult {
  /** Messages added (a message already in the outbox for its endpoint is not added again). */
  queued: number;
  /** Per endpoint, messages refused because its queue held WEBHOOK_ENDPOINT_QUEUE_MAX. */
  dropped: Map<string, number>;
}

/**
 * Adds messages to the outbox within the caller's transaction (the status writer's, the inbox
 * store's), at most `queueMax` pending per endpoint. The endpoints' rows are locked first, in id
 * order, by everyone who changes their `pending` count (writers, senders, replays), so two
 * transactions never wait on each other in a circle. Three statements whatever the size (arrays
 * bound as parameters), none when `messages` is empty.
 *
 * @param revive a message of the same id that had failed is queued again (replay); otherwise an
 *   existing message of the same id is left as it is (an event's transition is enqueued once).
 */
export async function enqueue(
  trx: Kysely<StatusDb>,
  messages: readonly OutboxMessage[],
  queueMax: number,
  revive = false,
): Promise<EnqueueResult> {
  const dropped = new Map<string, number>();
  if (messages.length === 0) return { queued: 0, dropped };
  const ids = [...new Set(messages.map((m) => m.endpointId))].sort();
  const locked = await trx
    .selectFrom('webhook_endpoints')
    .select(['id', 'pending'])
    .where('id', 'in', ids)
    .orderBy('id')
    .forUpdate()
    .execute();
  const room = new Map(locked.map((e) => [e.id, Math.max(0, queueMax - e.pending)]));
  const kept: OutboxMessage[] = [];
  // One message per (endpoint, id) in a call: a live event's `delivered` derived from its `sent`
  // and its own `delivered` record in the same batch take one place, not two.
  const seen = new Set<string>();
  for (const m of messages) {
    const key = `${m.endpointId} ${m.msgId}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const left = room.get(m.endpointId);
    if (left === undefined) continue; // deleted meanwhile
    if (left > 0) {
      kept.push(m);
      room.set(m.endpointId, left - 1);
    } else {
      dropped.set(m.endpointId, (dropped.get(m.endpointId) ?? 0) + 1);
    }
  }
  if (kept.length === 0) return { queued: 0, dropped };
  const conflict = revive
    ? sql`do update set failed_at = null, next_at = now(), leased_until = null, attempts = 0
          where webhook_messages.failed_at is not null`
    : sql`do nothing`;
  const added = await sql<{ endpoint_id: string; n: number }>`
    with added as (
      insert into webhook_messages (endpoint_id, msg_id, type, body, transition_at)
      select * from unnest(${kept.map((m) => m.endpointId)}::text[], ${kept.map((m) => m.msgId)}::text[],
        ${kept.map((m) => m.type)}::text[], ${kept.map((m) => m.body)}::text[],
        ${kept.map((m) => m.transitionAt.toISOString())}::timestamptz[])
      on conflict (endpoint_id, msg_id) ${conflict}
      returning endpoint_id)
    select endpoint_id, count(*)::int as n from added group by endpoint_id`.execute(trx);
  if (added.rows.length > 0) {
    await sql`update webhook_endpoints e set pending = e.pending + a.n
      from unnest(${added.rows.map((r) => r.endpoint_id)}::text[], ${added.rows.map((r) => r.n)}::int[]) as a(id, n)
      where e.id = a.id`.execute(trx);
  }
  return { queued: added.rows.reduce((s, r) => s + r.n, 0), dropped };
}

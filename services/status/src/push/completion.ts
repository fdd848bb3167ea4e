import { type Kysely, sql } from 'kysely';
import type { StatusDb } from '../db-schema.js';

/** What a group's round came to. */
export interface GroupResult {
  /** Subscriptions that accepted a push, with the events each push covered. */
  delivered: Array<{ subscription: string; events: string[] }>;
  /** Subscriptions the push service reported gone (404/410): deleted. */
  gone: string[];
  /** The group's events still owed to some subscription: retried after waitMs; else dropped. */
  retry: { events: string[]; waitMs: number } | undefined;
  /** Every event of the claim (those not retried leave the due table). */
  events: string[];
}

/**
 * Records one group's round in one transaction: each push accepted (per event and subscription,
 * so no later round sends an event to that subscription again), the event's pushed time and reach,
 * the subscription's last success; subscriptions gone are deleted; the events still owed go back
 * due at the retry's time, unleased (so a proof deletes them meanwhile), the rest leave. Only
 * rows this worker leased are touched: a lease that ran out and was taken by another is theirs.
 */
export async function recordGroup(
  db: Kysely<StatusDb>,
  worker: string,
  r: GroupResult,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const pairs = r.delivered.flatMap((d) => d.events.map((e) => [e, d.subscription] as const));
    if (pairs.length > 0) {
      await trx
        .insertInto('push_sent')
        .values(pairs.map(([event_id, subscription_id]) => ({ event_id, subscription_id })))
        .onConflict((oc) => oc.doNothing())
        .execute();
      await trx
        .updateTable('push_subscriptions')
        .set({ last_success_at: sql`now()` })
        .where(
          'id',
          'in',
          r.delivered.map((d) => d.subscription),
        )
        .execute();
      const ids = [...new Set(pairs.map(([e]) => e))];
      await sql`update status_events s set pushed_at = coalesce(s.pushed_at, now()),
          pushed_count = (select count(*)::int from push_sent p where p.event_id = s.id)
        where s.id = any(${ids}::text[])`.execute(trx);
    }
    if (r.gone.length > 0)
      await trx.deleteFrom('push_subscriptions').where('id', 'in', r.gone).execute();
    const retried = new Set(r.retry?.events ?? []);
    if (r.retry && retried.size > 0) {
      await trx
        .updateTable('push_due')
        .set({
          due_at: sql`now() + ${`${r.retry.waitMs} milliseconds`}::interval`,
          leased_until: null,
          leased_by: null,
        })
        .where('event_id', 'in', [...retried])
        .where('leased_by', '=', worker)
        .execute();
    }
    const done = r.events.filter((e) => !retried.has(e));
    if (done.length > 0) {
      await trx
        .deleteFrom('push_due')
        .where('event_id', 'in', done)
        .where('leased_by', '=', worker)
        .execute();
    }
  });
}

/** Releases rows a stopping sender claimed but did not attempt: due again at once. */
export async function releaseGroup(
  db: Kysely<StatusDb>,
  worker: string,
  events: string[],
): Promise<void> {
  if (events.length === 0) return;
  await db
    .updateTable('push_due')
    .set({ leased_until: null, leased_by: null, attempts: sql`greatest(attempts - 1, 0)` })
    .where('event_id', 'in', events)
    .where('leased_by', '=', worker)
    .execute();
}

/** Which of `events` each of `subscriptions` got already (an earlier round of a retry). */
export async function alreadySent(
  db: Kysely<StatusDb>,
  events: string[],
  subscriptions: string[],
): Promise<Set<string>> {
  if (events.length === 0 || subscriptions.length === 0) return new Set();
  const rows = await db
    .selectFrom('push_sent')
    .select(['event_id', 'subscription_id'])
    .where('event_id', 'in', events)
    .where('subscription_id', 'in', subscriptions)
    .execute();
  return new Set(rows.map((r) => `${r.event_id}\u0000${r.subscription_id}`));
}

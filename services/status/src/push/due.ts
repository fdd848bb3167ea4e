import type { StatusEvent } from '@herald/proto';
import { type Kysely, sql } from 'kysely';
import type { StatusDb, StatusEventRow } from '../db-schema.js';
import type { FirstTransition } from '../merge.js';

/**
 * The push decision, in the writer's transaction (so it is made once per event, whatever
 * redelivers): an event's first `pending` record that carries a push spec adds a due row at
 * `at + after_ms`, unless the event is proved already (`delivered`, or `sent`: a socket had it
 * live), whichever order the records came in; a proof deletes the event's due rows that no
 * sender holds. A row a sender holds is left: its result decides, and a proof recorded meanwhile
 * keeps the event from a retry (the claim drops proved events). A proof held back (`deferred`:
 * its event has no row yet) is remembered in push_proofs, so the pending record it overtook adds
 * nothing when it comes. Returns the earliest due time added, for the sender's timer.
 */
export async function decidePushes(
  trx: Kysely<StatusDb>,
  records: readonly StatusEvent[],
  firsts: readonly FirstTransition[],
  deferred: readonly number[],
): Promise<Date | undefined> {
  // Keyed by account too: a record never touches another account's rows.
  const key = (r: { id: string; account_id: string }) => `${r.id}\u0000${r.account_id}`;
  const proved = new Map<string, StatusEvent>();
  for (const r of records)
    if (r.status === 'delivered' || r.status === 'sent') proved.set(key(r), r);
  const early = new Map<string, StatusEvent>();
  for (const i of deferred) {
    const r = records[i];
    if (r) early.set(key(r), r);
  }
  if (early.size > 0) {
    await trx
      .insertInto('push_proofs')
      .values([...early.values()].map((r) => ({ event_id: r.id, account_id: r.account_id })))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
  await cancelPushes(trx, [...proved.values()]);
  const specs = new Map<string, StatusEvent>();
  for (const r of records) if (r.status === 'pending' && r.push !== undefined) specs.set(r.id, r);
  if (specs.size === 0) return undefined;
  let rows = [];
  let earliest: Date | undefined;
  for (const f of firsts) {
    if (f.status !== 'pending') continue;
    const rec = specs.get(f.row.id);
    if (!rec?.push || !dueFor(f.row)) continue;
    const at = new Date(rec.at);
    const due = new Date(rec.at + rec.push.after_ms);
    rows.push({
      event_id: f.row.id,
      account_id: f.row.account_id,
      key_id: f.row.key_id,
      recipient: f.row.recipient as string,
      at,
      due_at: due,
      expires_at: new Date(rec.at + rec.push.ttl_s * 1000),
      spec: JSON.stringify(rec.push),
    });
    if (!earliest || due < earliest) earliest = due;
  }
  if (rows.length === 0) return undefined;
  const overtaken = (
    await sql<{ event_id: string }>`delete from push_proofs x
      using unnest(${rows.map((r) => r.event_id)}::text[], ${rows.map((r) => r.account_id)}::text[])
        as n(id, account)
      where x.event_id = n.id and x.account_id = n.account
      returning x.event_id`.execute(trx)
  ).rows;
  if (overtaken.length > 0) {
    const skip = new Set(overtaken.map((o) => o.event_id));
    rows = rows.filter((r) => !skip.has(r.event_id));
    earliest = rows.reduce<Date | undefined>(
      (m, r) => (!m || r.due_at < m ? r.due_at : m),
      undefined,
    );
    if (rows.length === 0) return undefined;
  }
  await trx
    .insertInto('push_due')
    .values(rows)
    .onConflict((oc) => oc.column('event_id').doNothing())
    .execute();
  return earliest;
}

/** An event as the batch leaves it still wants its push: unproved, not failed, with a recipient. */
function dueFor(row: StatusEventRow): boolean {
  return (
    row.delivered_at === null &&
    row.sent_at === null &&
    row.failed_at === null &&
    row.recipient !== null &&
    row.key_id !== ''
  );
}

/**
 * Deletes the due pushes of events proved (a `delivered` or `sent` record) or read (the inbox's
 * read mark), each of its own account, that no sender holds.
 */
export async function cancelPushes(
  trx: Kysely<StatusDb>,
  events: ReadonlyArray<{ id: string; account_id: string }>,
): Promise<void> {
  if (events.length === 0) return;
  await sql`delete from push_due d
    using unnest(${events.map((r) => r.id)}::text[], ${events.map((r) => r.account_id)}::text[]) as p(id, account)
    where d.event_id = p.id and d.account_id = p.account
      and (d.leased_until is null or d.leased_until <= now())`.execute(trx);
}

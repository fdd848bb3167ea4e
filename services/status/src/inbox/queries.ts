import { type Kysely, sql } from 'kysely';
import type { StatusDb } from '../db-schema.js';

export interface Recipient {
  account: string;
  recipient: string;
}

/** Unread counts of some recipients, one statement; a recipient with none counts 0. */
export async function unreadCounts(
  db: Kysely<StatusDb>,
  recipients: readonly Recipient[],
): Promise<number[]> {
  if (recipients.length === 0) return [];
  const rows = await sql<{ account_id: string; recipient: string; unread: number }>`
    select account_id, recipient, count(*)::int as unread from inbox_events
    where read_at is null and (account_id, recipient) in (
      select * from unnest(${recipients.map((r) => r.account)}::text[],
        ${recipients.map((r) => r.recipient)}::text[]))
    group by account_id, recipient`.execute(db);
  const by = new Map(rows.rows.map((r) => [`${r.account_id}\u0000${r.recipient}`, r.unread]));
  return recipients.map((r) => by.get(`${r.account}\u0000${r.recipient}`) ?? 0);
}

export interface HistoryRow {
  seq: number;
  id: string;
  ts: number;
  payloadJson: string;
  read: boolean;
  /** A topic event's copy: its topic (the catch-up reads it; history does not). */
  topic?: string;
}

/**
 * One page, newest first, of events with a sequence below `before` (null: the newest); `next` is
 * the sequence of the page's oldest event when older ones exist, else null.
 */
export async function historyPage(
  db: Kysely<StatusDb>,
  r: Recipient,
  before: string | null,
  limit: number,
): Promise<{ events: HistoryRow[]; next: string | null }> {
  let q = db
    .selectFrom('inbox_events')
    .select(['seq', 'id', 'ts', 'payload_json', 'read_at'])
    .where('account_id', '=', r.account)
    .where('recipient', '=', r.recipient);
  if (before !== null) q = q.where('seq', '<', before as never);
  const rows = await q
    .orderBy('seq', 'desc')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit).map(toRow);
  const more = rows.length > limit;
  const last = page[page.length - 1];
  return { events: page, next: more && last ? String(last.seq) : null };
}

/** Events with a sequence above `after`, oldest first (a device's catch-up). */
export async function eventsAfter(
  db: Kysely<StatusDb>,
  r: Recipient,
  after: number,
  limit: number,
): Promise<HistoryRow[]> {
  const rows = await db
    .selectFrom('inbox_events')
    .select(['seq', 'id', 'ts', 'payload_json', 'read_at', 'topic'])
    .where('account_id', '=', r.account)
    .where('recipient', '=', r.recipient)
    .where('seq', '>', String(after) as never)
    .orderBy('seq', 'asc')
    .limit(limit)
    .execute();
  return rows.map(toRow);
}

/**
 * Marks `ids` (or every event, `ids` null) read; returns the ids of the events this marked, the
 * first read mark of each (what `event.read` webhooks are sent for).
 */
export async function markRead(
  db: Kysely<StatusDb>,
  r: Recipient,
  ids: readonly string[] | null,
  now: Date,
): Promise<string[]> {
  let q = db
    .updateTable('inbox_events')
    .set({ read_at: now })
    .where('account_id', '=', r.account)
    .where('recipient', '=', r.recipient)
    .where('read_at', 'is', null);
  if (ids !== null) q = q.where('id', 'in', [...ids]);
  const rows = await q.returning('id').execute();
  return rows.map((row) => row.id);
}

/**
 * Marks an account's kept events settled once a status record says a socket had them (`sent`,
 * `delivered`) or the sender was told they failed (`failed`): only then may expiry remove them.
 * Runs in the status writer's transaction; finds rows by the unique index's (account_id, id).
 */
export async function markDelivered(
  db: Kysely<StatusDb>,
  events: ReadonlyArray<{ account: string; id: string }>,
): Promise<number> {
  if (events.length === 0) return 0;
  const res = await sql`
    update inbox_events set delivered = true
    where not delivered and (account_id, id) in (
      select * from unnest(${events.map((e) => e.account)}::text[], ${events.map((e) => e.id)}::text[]))`.execute(
    db,
  );
  return Number(res.numAffectedRows ?? 0);
}

/**
 * Removes up to `chunk` events past their expiry that are settled (never one not yet delivered);
 * returns the recipients that lost an unread event (their count changed) and how many went.
 */
export async function expireChunk(
  db: Kysely<StatusDb>,
  now: Date,
  chunk: number,
): Promise<{ removed: number; unreadChanged: Recipient[] }> {
  const res = await sql<{ account_id: string; recipient: string; unread: boolean }>`
    delete from inbox_events where seq in (
      select seq from inbox_events where expires_at <= ${now.toISOString()}::timestamptz and delivered
      limit ${chunk})
    returning account_id, recipient, read_at is null as unread`.execute(db);
  const changed = new Map<string, Recipient>();
  for (const r of res.rows) {
    if (r.unread)
      changed.set(`${r.account_id}\u0000${r.recipient}`, {
        account: r.account_id,
        recipient: r.recipient,
      });
  }
  return { removed: res.rows.length, unreadChanged: [...changed.values()] };
}

function toRow(r: {
  seq: string;
  id: string;
  ts: string;
  payload_json: string;
  read_at: Date | null;
  topic?: string | null;
}): HistoryRow {
  const row: HistoryRow = {
    seq: Number(r.seq),
    id: r.id,
    ts: Number(r.ts),
    payloadJson: r.payload_json,
    read: r.read_at !== null,
  };
  if (r.topic) row.topic = r.topic;
  return row;
}

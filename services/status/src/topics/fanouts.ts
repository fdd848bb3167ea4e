import {
  type FanoutSummary,
  HeraldError,
  type TopicEventView,
  type TopicSummary,
} from '@herald/proto';
import { type Kysely, sql } from 'kysely';
import type { StatusDb } from '../db-schema.js';
import { noTopic } from './store.js';

export interface Snapshot {
  members: number;
  chunks: number;
}

/**
 * Keeps a topic event's membership as it is now (less `exclude`), in chunks of `chunkSize`
 * recipients in recipient order: one statement, so one consistent view of the members, however
 * the membership changes afterwards. Idempotent per event id: a retry (the same Idempotency-Key,
 * or ingress asking again after a lost answer) gets the first snapshot back.
 */
export async function snapshot(
  db: Kysely<StatusDb>,
  q: { account: string; topic: string; id: string; exclude: readonly string[]; chunkSize: number },
): Promise<Snapshot> {
  return db.transaction().execute(async (trx) => {
    const known = await trx
      .selectFrom('topic_fanouts')
      .select(['account_id', 'members', 'chunks'])
      .where('id', '=', q.id)
      .executeTakeFirst();
    if (known) {
      if (known.account_id !== q.account) throw new HeraldError('internal', 'event id reused');
      return { members: known.members, chunks: known.chunks };
    }
    const topic = await trx
      .selectFrom('topics')
      .select('members')
      .where('account_id', '=', q.account)
      .where('topic', '=', q.topic)
      .forShare()
      .executeTakeFirst();
    if (!topic) throw noTopic(q.topic);
    const chunks = await sql<{
      n: number;
    }>`insert into topic_fanout_chunks (fanout_id, chunk, recipients)
      select ${q.id}, m.chunk, array_agg(m.recipient order by m.recipient)
      from (select recipient,
          ((row_number() over (order by recipient)) - 1) / ${q.chunkSize}::int as chunk
        from topic_members
        where account_id = ${q.account} and topic = ${q.topic}
          and not (recipient = any(${[...q.exclude]}::text[]))) m
      group by m.chunk
      returning cardinality(recipients) as n`.execute(trx);
    const members = chunks.rows.reduce((sum, r) => sum + Number(r.n), 0);
    await trx
      .insertInto('topic_fanouts')
      .values({
        id: q.id,
        account_id: q.account,
        topic: q.topic,
        members,
        chunks: chunks.rows.length,
      })
      .execute();
    return { members, chunks: chunks.rows.length };
  });
}

/** One chunk of a topic event's snapshot: the topic and the chunk's recipients. */
export async function chunkOf(
  db: Kysely<StatusDb>,
  account: string,
  id: string,
  chunk: number,
): Promise<{ topic: string; recipients: string[] }> {
  const row = await db
    .selectFrom('topic_fanout_chunks as c')
    .innerJoin('topic_fanouts as f', 'f.id', 'c.fanout_id')
    .select(['f.topic', 'c.recipients'])
    .where('c.fanout_id', '=', id)
    .where('f.account_id', '=', account)
    .where('c.chunk', '=', chunk)
    .executeTakeFirst();
  if (!row) {
    throw new HeraldError(
      'not_found',
      `No chunk ${chunk} of topic event ${id}: its snapshot was trimmed or never made`,
      { field: 'id' },
    );
  }
  return row;
}

/**
 * The topic events among `ids` (of `account`): each one's members and its copies counted by
 * their current status (the furthest each got, as an event's own status reads).
 */
export async function topicViews(
  db: Kysely<StatusDb>,
  account: string,
  ids: readonly string[],
): Promise<Map<string, TopicEventView>> {
  const out = new Map<string, TopicEventView>();
  if (ids.length === 0) return out;
  const fanouts = await db
    .selectFrom('topic_fanouts')
    .select(['id', 'topic', 'members'])
    .where('account_id', '=', account)
    .where('id', 'in', [...new Set(ids)])
    .execute();
  for (const f of fanouts) {
    const c = await sql<Record<'sent' | 'pending' | 'delivered' | 'failed', string>>`select
        count(*) filter (where failed_at is not null) as failed,
        count(*) filter (where failed_at is null and delivered_at is not null) as delivered,
        count(*) filter (where failed_at is null and delivered_at is null and queued_at is not null) as pending,
        count(*) filter (where failed_at is null and delivered_at is null and queued_at is null) as sent
      from status_events where topic_id = ${f.id} and account_id = ${account}`.execute(db);
    const n = c.rows[0];
    out.set(f.id, {
      topic: f.topic,
      members: f.members,
      sent: Number(n?.sent ?? 0),
      pending: Number(n?.pending ?? 0),
      delivered: Number(n?.delivered ?? 0),
      failed: Number(n?.failed ?? 0),
    });
  }
  return out;
}

/** A topic event's own status, from its copies': pending until each member's copy has one. */
export function topicStatus(v: TopicEventView): 'sent' | 'pending' | 'delivered' | 'failed' {
  const recorded = v.sent + v.pending + v.delivered + v.failed;
  if (recorded < v.members || v.pending > 0) return 'pending';
  if (v.failed > 0) return 'failed';
  return v.delivered === v.members ? 'delivered' : 'sent';
}

/** The account's topics by name, after `after`, with their member counts (the dashboard's list). */
export async function accountTopics(
  db: Kysely<StatusDb>,
  account: string,
  q: { after?: string | undefined; limit: number },
): Promise<TopicSummary[]> {
  let query = db
    .selectFrom('topics')
    .select(['topic', 'members', 'created_at'])
    .where('account_id', '=', account);
  if (q.after !== undefined) query = query.where('topic', '>', q.after);
  const rows = await query.orderBy('topic').limit(q.limit).execute();
  return rows.map((r) => ({ ...r, created_at: r.created_at.toISOString() }));
}

/** The account's newest topic events (while their snapshots are kept), each with its progress. */
export async function recentFanouts(
  db: Kysely<StatusDb>,
  account: string,
  limit: number,
): Promise<FanoutSummary[]> {
  const rows = await db
    .selectFrom('topic_fanouts')
    .select(['id', 'created_at'])
    .where('account_id', '=', account)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute();
  const views = await topicViews(
    db,
    account,
    rows.map((r) => r.id),
  );
  return rows.flatMap((r) => {
    const v = views.get(r.id);
    return v
      ? [{ id: r.id, status: topicStatus(v), created_at: r.created_at.toISOString(), ...v }]
      : [];
  });
}

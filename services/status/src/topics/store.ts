import { HeraldError } from '@herald/proto';
import { type Kysely, sql } from 'kysely';
import type { StatusDb } from '../db-schema.js';

/** The caps a membership change is held to (status config). */
export interface TopicCaps {
  /** TOPICS_PER_ACCOUNT_MAX. */
  topicsPerAccount: number;
  /** TOPIC_MEMBERS_MAX. */
  membersPerTopic: number;
}

export interface Change {
  changed: number;
  members: number;
}

/**
 * Adds recipients to a topic (made on its first add), idempotently: a member already there is
 * not added twice. One transaction: the topic's row is locked, so concurrent adds count right;
 * an add that would pass a cap is refused whole, naming the setting.
 */
export async function addMembers(
  db: Kysely<StatusDb>,
  account: string,
  topic: string,
  recipients: readonly string[],
  caps: TopicCaps,
): Promise<Change> {
  return db.transaction().execute(async (trx) => {
    let row = await lockTopic(trx, account, topic);
    if (!row) {
      // One account's topic creations in turn: the count and the insert agree.
      await sql`select pg_advisory_xact_lock(hashtext(${`topics:${account}`}))`.execute(trx);
      row = await lockTopic(trx, account, topic);
    }
    if (!row) {
      const { n } = await trx
        .selectFrom('topics')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('account_id', '=', account)
        .executeTakeFirstOrThrow();
      if (Number(n) >= caps.topicsPerAccount) {
        throw new HeraldError(
          'topics_full',
          `This account already has ${caps.topicsPerAccount} topics (TOPICS_PER_ACCOUNT_MAX): delete a topic you no longer use, or ask the operator to raise the setting`,
          { field: 'topic' },
        );
      }
      await trx.insertInto('topics').values({ account_id: account, topic, members: 0 }).execute();
      row = { members: 0 };
    }
    const added = await sql`insert into topic_members (account_id, topic, recipient)
      select ${account}, ${topic}, r from unnest(${[...new Set(recipients)]}::text[]) as r
      on conflict do nothing`.execute(trx);
    const changed = Number(added.numAffectedRows ?? 0);
    const members = row.members + changed;
    if (members > caps.membersPerTopic) {
      throw new HeraldError(
        'topics_full',
        `This topic would have ${members} members, more than ${caps.membersPerTopic} (TOPIC_MEMBERS_MAX): nothing was added; remove members first, or ask the operator to raise the setting`,
        { field: 'recipients' },
      );
    }
    if (changed > 0) await setMembers(trx, account, topic, members);
    return { changed, members };
  });
}

/** Removes recipients from a topic; a recipient not a member (or no such topic) changes nothing. */
export async function removeMembers(
  db: Kysely<StatusDb>,
  account: string,
  topic: string,
  recipients: readonly string[],
): Promise<Change> {
  return db.transaction().execute(async (trx) => {
    const row = await lockTopic(trx, account, topic);
    if (!row) return { changed: 0, members: 0 };
    const removed = await trx
      .deleteFrom('topic_members')
      .where('account_id', '=', account)
      .where('topic', '=', topic)
      .where('recipient', 'in', [...new Set(recipients)])
      .executeTakeFirst();
    const changed = Number(removed.numDeletedRows);
    const members = row.members - changed;
    if (changed > 0) await setMembers(trx, account, topic, members);
    return { changed, members };
  });
}

export interface Page {
  recipients: string[];
  members: number;
  next_cursor: string | null;
}

/** One page of a topic's members, in recipient order, after `cursor`. */
export async function listMembers(
  db: Kysely<StatusDb>,
  account: string,
  topic: string,
  cursor: string | undefined,
  limit: number,
): Promise<Page> {
  const row = await db
    .selectFrom('topics')
    .select('members')
    .where('account_id', '=', account)
    .where('topic', '=', topic)
    .executeTakeFirst();
  if (!row) throw noTopic(topic);
  let q = db
    .selectFrom('topic_members')
    .select('recipient')
    .where('account_id', '=', account)
    .where('topic', '=', topic);
  if (cursor !== undefined) q = q.where('recipient', '>', cursor);
  const rows = await q
    .orderBy('recipient')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit).map((r) => r.recipient);
  const more = rows.length > limit;
  return {
    recipients: page,
    members: row.members,
    next_cursor: more ? (page.at(-1) ?? null) : null,
  };
}

/** Deletes a topic and its members; fan-outs already accepted go on from their snapshots. */
export async function deleteTopic(
  db: Kysely<StatusDb>,
  account: string,
  topic: string,
): Promise<{ deleted: boolean; members: number }> {
  return db.transaction().execute(async (trx) => {
    const row = await lockTopic(trx, account, topic);
    if (!row) return { deleted: false, members: 0 };
    await trx
      .deleteFrom('topic_members')
      .where('account_id', '=', account)
      .where('topic', '=', topic)
      .execute();
    await trx
      .deleteFrom('topics')
      .where('account_id', '=', account)
      .where('topic', '=', topic)
      .execute();
    return { deleted: true, members: row.members };
  });
}

export function noTopic(topic: string): HeraldError {
  return new HeraldError(
    'not_found',
    `This account has no topic "${topic}": add members with PUT /topics/${topic}/members first`,
    { field: 'topic' },
  );
}

async function lockTopic(
  trx: Kysely<StatusDb>,
  account: string,
  topic: string,
): Promise<{ members: number } | undefined> {
  return trx
    .selectFrom('topics')
    .select('members')
    .where('account_id', '=', account)
    .where('topic', '=', topic)
    .forUpdate()
    .executeTakeFirst();
}

async function setMembers(
  trx: Kysely<StatusDb>,
  account: string,
  topic: string,
  members: number,
): Promise<void> {
  await trx
    .updateTable('topics')
    .set({ members })
    .where('account_id', '=', account)
    .where('topic', '=', topic)
    .execute();
}

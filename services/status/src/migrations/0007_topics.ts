import { type Kysely, sql } from 'kysely';

/**
 * Topics (issue 44): an account's topics (one row each, so the per-account cap is a count of
 * rows), their members, and the membership each topic event snapshotted at acceptance, kept in
 * chunks (one row per chunk of members, the unit of the fan-out's work items); and on each
 * copy's status row the topic event it belongs to, so the topic event's status counts its copies.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('topics')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('members', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('topics_pk', ['account_id', 'topic'])
    .execute();
  await db.schema
    .createTable('topic_members')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('added_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // The listing's order and the snapshot's: by recipient within the topic.
    .addPrimaryKeyConstraint('topic_members_pk', ['account_id', 'topic', 'recipient'])
    .execute();
  await db.schema
    .createTable('topic_fanouts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('members', 'integer', (c) => c.notNull())
    .addColumn('chunks', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('topic_fanouts_created_idx')
    .on('topic_fanouts')
    .column('created_at')
    .execute();
  await db.schema
    .createTable('topic_fanout_chunks')
    .addColumn('fanout_id', 'text', (c) => c.notNull())
    .addColumn('chunk', 'integer', (c) => c.notNull())
    .addColumn('recipients', sql`text[]`, (c) => c.notNull())
    .addPrimaryKeyConstraint('topic_fanout_chunks_pk', ['fanout_id', 'chunk'])
    .execute();
  await sql`alter table status_events add column topic_id text`.execute(db);
  await sql`create index status_events_topic_idx on status_events (topic_id) where topic_id is not null`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists status_events_topic_idx`.execute(db);
  await sql`alter table status_events drop column topic_id`.execute(db);
  for (const t of ['topic_fanout_chunks', 'topic_fanouts', 'topic_members', 'topics']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}

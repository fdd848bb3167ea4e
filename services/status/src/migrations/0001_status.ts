import { type Kysely, sql } from 'kysely';

/** Per-event status rows and the per-minute rollup. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('status_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('recipient', 'text')
    .addColumn('sent_at', 'timestamptz')
    .addColumn('queued_at', 'timestamptz')
    .addColumn('delivered_at', 'timestamptz')
    .addColumn('failed_at', 'timestamptz')
    .addColumn('reason', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // Every read names the account first: the indexes lead with it.
  await db.schema
    .createIndex('status_events_account_created_idx')
    .on('status_events')
    .columns(['account_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('status_events_key_created_idx')
    .on('status_events')
    .columns(['account_id', 'key_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('status_events_recipient_idx')
    .on('status_events')
    .columns(['account_id', 'recipient', 'created_at'])
    .execute();
  await db.schema
    .createIndex('status_events_created_idx')
    .on('status_events')
    .column('created_at')
    .execute();

  await db.schema
    .createTable('status_rollup')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('minute', 'timestamptz', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('last_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('status_rollup_pk', ['account_id', 'key_id', 'status', 'minute'])
    .execute();
  await db.schema
    .createIndex('status_rollup_minute_idx')
    .on('status_rollup')
    .column('minute')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('status_rollup').execute();
  await db.schema.dropTable('status_events').execute();
}

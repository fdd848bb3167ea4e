import { type Kysely, sql } from 'kysely';

/**
 * Inbox mode (issue 32): one row per kept event of an inbox key, per recipient. `seq` orders a
 * recipient's events (history pages newest first by it, a device's catch-up ascends it); the
 * unique (account_id, id, recipient) stores a retried event once and, led by the account and the
 * event id, is also what a status record's `delivered`/`sent` finds its rows by.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('inbox_events')
    .addColumn('seq', 'bigserial', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    /** The event's ts, epoch ms, as the sender's answer gave it. */
    .addColumn('ts', 'bigint', (c) => c.notNull())
    /** The sender's payload JSON text, returned byte for byte. */
    .addColumn('payload_json', 'text', (c) => c.notNull())
    .addColumn('read_at', 'timestamptz')
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    /** Whether a socket had it (sent/delivered) or the sender was told it failed: expiry may remove it. */
    .addColumn('delivered', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await db.schema
    .createIndex('inbox_events_event_uq')
    .on('inbox_events')
    .columns(['account_id', 'id', 'recipient'])
    .unique()
    .execute();
  // History (newest first, `seq < before`) and catch-up (`seq > after`), one recipient at a time.
  await db.schema
    .createIndex('inbox_events_recipient_seq_idx')
    .on('inbox_events')
    .columns(['account_id', 'recipient', 'seq'])
    .execute();
  // The unread count reads only the unread rows.
  await sql`create index inbox_events_unread_idx on inbox_events (account_id, recipient) where read_at is null`.execute(
    db,
  );
  await db.schema
    .createIndex('inbox_events_expires_idx')
    .on('inbox_events')
    .column('expires_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('inbox_events').execute();
}

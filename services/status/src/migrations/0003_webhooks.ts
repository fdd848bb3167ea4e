import { type Kysely, sql } from 'kysely';

/**
 * Delivery-status webhooks (issue 39): an account's endpoints, the outbox of messages waiting to
 * be sent to them (written in the transaction that records the transition, so none is lost and
 * none enqueued twice), and the log of attempts. `status_events.payload_json` keeps an opted-in
 * key's payload for the bodies of its later transitions.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', sql`text[]`, (c) => c.notNull())
    /** `whsec_…`, sealed by kit's SecretBox under WEBHOOK_SECRET_KEY, bound to the row's id. */
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    /** The secret a rotation replaced; it keeps signing beside the new one until previous_until. */
    .addColumn('previous_secret_sealed', 'text')
    .addColumn('previous_until', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('disabled_at', 'timestamptz')
    .addColumn('disabled_reason', 'text')
    .addColumn('failing_since', 'timestamptz')
    /** Messages not yet sent nor failed: the queue bound reads it, the writer and sender keep it. */
    .addColumn('pending', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // The writer asks, once per batch, for the enabled endpoints of the batch's accounts.
  await sql`create index webhook_endpoints_account_idx on webhook_endpoints (account_id) where disabled_at is null`.execute(
    db,
  );

  await db.schema
    .createTable('webhook_messages')
    .addColumn('seq', 'bigserial', (c) => c.primaryKey())
    .addColumn('endpoint_id', 'text', (c) =>
      c.notNull().references('webhook_endpoints.id').onDelete('cascade'),
    )
    /** The `webhook-id` header: `<event id>:<type>`, or `test:<uuid>`; the same on every retry. */
    .addColumn('msg_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    /** The JSON body, fixed when enqueued so every retry sends the same bytes. */
    .addColumn('body', 'text', (c) => c.notNull())
    /** When the transition happened: lag is measured from it. */
    .addColumn('transition_at', 'timestamptz', (c) => c.notNull())
    /** Due at; a claim moves it to the lease's end, so a crashed worker's claim comes back. */
    .addColumn('next_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    /** Set while a worker holds it: what the per-endpoint concurrency counts. */
    .addColumn('leased_until', 'timestamptz')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    /** Set when the retry schedule was exhausted; such a message is kept for the record only. */
    .addColumn('failed_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('webhook_messages_msg_uq')
    .on('webhook_messages')
    .columns(['endpoint_id', 'msg_id'])
    .unique()
    .execute();
  await sql`create index webhook_messages_due_idx on webhook_messages (endpoint_id, next_at) where failed_at is null`.execute(
    db,
  );
  await sql`create index webhook_messages_leased_idx on webhook_messages (endpoint_id, leased_until) where leased_until is not null`.execute(
    db,
  );
  await sql`create index webhook_messages_failed_idx on webhook_messages (failed_at) where failed_at is not null`.execute(
    db,
  );

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('seq', 'bigserial', (c) => c.primaryKey())
    .addColumn('endpoint_id', 'text', (c) =>
      c.notNull().references('webhook_endpoints.id').onDelete('cascade'),
    )
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    .addColumn('msg_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('http_status', 'integer')
    .addColumn('error', 'text')
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_attempts_endpoint_idx')
    .on('webhook_attempts')
    .columns(['endpoint_id', 'seq'])
    .execute();

  await db.schema.alterTable('status_events').addColumn('payload_json', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('status_events').dropColumn('payload_json').execute();
  await db.schema.dropTable('webhook_attempts').execute();
  await db.schema.dropTable('webhook_messages').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
}

import { type Kysely, sql } from 'kysely';

/**
 * Push fallback (issue 40): an account's VAPID credentials (the private key sealed under
 * WEBHOOK_SECRET_KEY, as webhook secrets are), its recipients' Web Push subscriptions, the due
 * rows the writer adds for a `pending` record of a push key (and deletes on a proof), the log of
 * what each subscription got (at most once per event per subscription), and the event's pushed
 * time and reach on its status row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('push_credentials')
    .addColumn('account_id', 'text', (c) => c.primaryKey())
    .addColumn('vapid_public_key', 'text', (c) => c.notNull())
    /** base64url of the P-256 private key, sealed by kit's SecretBox, bound to the account. */
    .addColumn('vapid_private_sealed', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('push_subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('device', 'text')
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('p256dh', 'text', (c) => c.notNull())
    .addColumn('auth', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_success_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('push_subscriptions_endpoint_uq')
    .on('push_subscriptions')
    .columns(['account_id', 'endpoint'])
    .unique()
    .execute();
  // The sender's look-up per recipient, and the cap's oldest-first count.
  await db.schema
    .createIndex('push_subscriptions_recipient_idx')
    .on('push_subscriptions')
    .columns(['account_id', 'recipient', 'created_at'])
    .execute();

  await db.schema
    .createTable('push_due')
    .addColumn('event_id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    /** When the event was accepted. */
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    /** at + after_ms; a retry moves it to the retry's time. */
    .addColumn('due_at', 'timestamptz', (c) => c.notNull())
    /** at + ttl_s: never sent, nor retried, past it. */
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('spec', 'jsonb', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('leased_until', 'timestamptz')
    .addColumn('leased_by', 'text')
    .execute();
  // The claim: due rows first, by recipient.
  await db.schema.createIndex('push_due_due_idx').on('push_due').column('due_at').execute();
  await db.schema
    .createIndex('push_due_recipient_idx')
    .on('push_due')
    .columns(['account_id', 'recipient', 'due_at'])
    .execute();

  /** One row per event per subscription that got it: what keeps a push at most once. */
  await db.schema
    .createTable('push_sent')
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('subscription_id', 'text', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('push_sent_pk', ['event_id', 'subscription_id'])
    .execute();
  await db.schema.createIndex('push_sent_at_idx').on('push_sent').column('at').execute();

  /**
   * A proof (`delivered`) the writer holds back because the event's `pending` record has not come
   * yet: remembered here so that record, when it comes, adds no due row. Trimmed with the window.
   */
  await db.schema
    .createTable('push_proofs')
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('push_proofs_pk', ['event_id', 'account_id'])
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await sql`alter table status_events add column pushed_at timestamptz, add column pushed_count integer`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table status_events drop column pushed_at, drop column pushed_count`.execute(db);
  for (const t of [
    'push_proofs',
    'push_sent',
    'push_due',
    'push_subscriptions',
    'push_credentials',
  ])
    await db.schema.dropTable(t).execute();
}

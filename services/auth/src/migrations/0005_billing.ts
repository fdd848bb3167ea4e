import { type Kysely, sql } from 'kysely';

/**
 * Payments by mobile money, their audit trail, and the renewal reminders already sent. Amounts
 * are integer minor units (cents of the currency), never floats.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('payments')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('account_id', 'uuid', (c) =>
      c.notNull().references('accounts.id').onDelete('cascade'),
    )
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('amount_minor', 'integer', (c) => c.notNull().check(sql`amount_minor > 0`))
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c
        .notNull()
        .defaultTo('pending')
        .check(sql`status in ('pending', 'succeeded', 'failed', 'cancelled', 'timed_out')`),
    )
    // SHA-256 of the secret in the callback URL: a database leak yields no usable callback URL.
    .addColumn('callback_token_hash', 'text', (c) => c.notNull())
    // The provider's id for the payment (Daraja CheckoutRequestID), once the push was accepted.
    .addColumn('provider_ref', 'text', (c) => c.unique())
    .addColumn('merchant_ref', 'text')
    .addColumn('receipt', 'text')
    .addColumn('result_code', 'text')
    .addColumn('reason', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('next_query_at', 'timestamptz', (c) => c.notNull())
    .addColumn('settled_at', 'timestamptz')
    .addColumn('period_end', 'timestamptz')
    .addCheckConstraint(
      'payments_settled_when_not_pending',
      sql`(status = 'pending') = (settled_at is null)`,
    )
    .execute();
  await db.schema
    .createIndex('payments_account_created_idx')
    .on('payments')
    .columns(['account_id', 'created_at'])
    .execute();
  // One prompt at a time per account: two clicks on "Pay" must not charge twice.
  await db.schema
    .createIndex('payments_one_pending_idx')
    .on('payments')
    .column('account_id')
    .unique()
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  await db.schema
    .createIndex('payments_pending_due_idx')
    .on('payments')
    .column('next_query_at')
    .where(sql.ref('status'), '=', 'pending')
    .execute();

  // Append-only: who did what to a payment, and when.
  await db.schema
    .createTable('payment_events')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('payment_id', 'uuid', (c) =>
      c.notNull().references('payments.id').onDelete('cascade'),
    )
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('result_code', 'text')
    .addColumn('receipt', 'text')
    .addColumn('detail', 'text')
    .execute();
  await db.schema
    .createIndex('payment_events_payment_idx')
    .on('payment_events')
    .columns(['payment_id', 'id'])
    .execute();

  // A reminder goes once per account and period end; a renewal moves the end, so the next
  // period gets its own.
  await db.schema
    .createTable('renewal_reminders')
    .addColumn('account_id', 'uuid', (c) =>
      c.notNull().references('accounts.id').onDelete('cascade'),
    )
    .addColumn('period_end', 'timestamptz', (c) => c.notNull())
    .addColumn('sent_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('renewal_reminders_pk', ['account_id', 'period_end'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('renewal_reminders').execute();
  await db.schema.dropTable('payment_events').execute();
  await db.schema.dropTable('payments').execute();
}

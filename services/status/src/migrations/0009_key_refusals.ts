import { type Kysely, sql } from 'kysely';

/**
 * A key's recent refusals (issue 45, proto/refusals.ts): the last REFUSALS_PER_KEY of each key,
 * trimmed on write. `field` and `origin` are '' when the refusal had none, so identical refusals
 * compare equal when a new interval's record is merged into the last one of its kind. Never a
 * payload, never a key: the key's id only.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('key_refusals')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('field', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('origin', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('route', 'text', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('first_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // The dashboard's read and the trim: a key's rows, newest first.
  await db.schema
    .createIndex('key_refusals_key_idx')
    .on('key_refusals')
    .columns(['account_id', 'key_id', 'last_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('key_refusals').ifExists().execute();
}

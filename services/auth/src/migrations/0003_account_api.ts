import { type Kysely, sql } from 'kysely';

/** Passwords and login sessions for the account HTTP API. */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Null: the account was made by the admin CLI and cannot log in until it has a password.
  await db.schema.alterTable('accounts').addColumn('password_hash', 'text').execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('account_id', 'uuid', (c) =>
      c.notNull().references('accounts.id').onDelete('cascade'),
    )
    // SHA-256 of the cookie's token and of the CSRF token: a database leak yields no session.
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('csrf_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('sessions_account_id_idx')
    .on('sessions')
    .column('account_id')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sessions').execute();
  await db.schema.alterTable('accounts').dropColumn('password_hash').execute();
}

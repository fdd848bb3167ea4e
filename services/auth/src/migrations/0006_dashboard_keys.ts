import { type Kysely, sql } from 'kysely';

/**
 * The dashboard's own credentials (`hk_dash_`), apart from `api_keys` so they are never listed,
 * counted against MAX_LIVE_KEYS_PER_ACCOUNT or revoked with the customer's keys. Only hashes are
 * stored; every row expires.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('dashboard_keys')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('account_id', 'uuid', (c) =>
      c.notNull().references('accounts.id').onDelete('cascade'),
    )
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('listen', 'send')`))
    // The Origin a listener was minted from: the edge requires it on the socket.
    .addColumn('domain', 'text')
    // A listener dies with the login that minted it (logout deletes the session).
    .addColumn('session_id', 'uuid', (c) => c.references('sessions.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('dashboard_keys_expires_at')
    .on('dashboard_keys')
    .column('expires_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('dashboard_keys').execute();
}

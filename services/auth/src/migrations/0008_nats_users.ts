import { type Kysely, sql } from 'kysely';

/**
 * NATS users for customer backends (`admin nats-user create`): each may only request its
 * account's dispatch subjects. Only the password's SHA-256 is stored (it is 256 random bits, so a
 * slow hash adds nothing); the auth service checks it when nats-server asks (auth callout).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('nats_users')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('account_id', 'uuid', (c) =>
      c.notNull().references('accounts.id').onDelete('cascade'),
    )
    .addColumn('username', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('revoked_at', 'timestamptz')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('nats_users').execute();
}

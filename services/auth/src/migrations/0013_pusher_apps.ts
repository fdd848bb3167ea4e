import { type Kysely, sql } from 'kysely';

/**
 * Pusher apps (issue 41): the `app_id`, `key` and `secret` stock Pusher clients and servers use,
 * bound to one of the account's keys, whose plan, caps, domain, scope and rate limits apply. The
 * secret is sealed by kit's SecretBox (never in clear). The bound key belongs to the same account,
 * enforced by the composite foreign key (hence the unique (id, account_id) on api_keys). Keys are
 * never deleted but with their account, which takes its apps with it (cascade); a revoked key keeps
 * its apps, whose lookups then answer `key_revoked`, as the key's own verification does.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table api_keys add constraint api_keys_id_account_unique unique (id, account_id)`.execute(
    db,
  );
  await db.schema
    .createTable('pusher_apps')
    .addColumn('app_id', 'text', (c) => c.primaryKey().check(sql`app_id ~ '^[0-9]{1,20}$'`))
    .addColumn('key', 'text', (c) => c.notNull().unique().check(sql`key ~ '^[0-9a-f]{20}$'`))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('account_id', 'uuid', (c) =>
      c.notNull().references('accounts.id').onDelete('cascade'),
    )
    .addColumn('key_id', 'uuid', (c) => c.notNull())
    .addColumn('user_ids', 'text', (c) =>
      c.notNull().defaultTo('uuid').check(sql`user_ids in ('uuid', 'any')`),
    )
    .addColumn('user_channel', 'text', (c) =>
      c.check(sql`user_channel is null or char_length(user_channel) between 1 and 164`),
    )
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addForeignKeyConstraint(
      'pusher_apps_key_of_account',
      ['key_id', 'account_id'],
      'api_keys',
      ['id', 'account_id'],
      (c) => c.onDelete('cascade'),
    )
    .execute();
  await db.schema
    .createIndex('pusher_apps_account_id_idx')
    .on('pusher_apps')
    .column('account_id')
    .execute();
  await db.schema
    .createIndex('pusher_apps_key_id_idx')
    .on('pusher_apps')
    .column('key_id')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('pusher_apps').execute();
  await sql`alter table api_keys drop constraint api_keys_id_account_unique`.execute(db);
}

import { type Kysely, sql } from 'kysely';

/**
 * Recipient tokens by default for web inbox keys (issue 46): a key created with the explicit
 * opt-out (`--allow-unsigned-recipients`) says so, so the dashboard and `key list` can warn about
 * it. Every existing key is false: it keeps working as it is, flagged if it is a web key without
 * tokens. A key that requires tokens has not opted out of them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('allow_unsigned_recipients', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await sql`alter table api_keys add constraint api_keys_unsigned_recipients_check
    check (not (allow_unsigned_recipients and require_token))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .dropConstraint('api_keys_unsigned_recipients_check')
    .execute();
  await db.schema.alterTable('api_keys').dropColumn('allow_unsigned_recipients').execute();
}

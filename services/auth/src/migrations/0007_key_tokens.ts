import { type Kysely, sql } from 'kysely';

/**
 * Key scopes and recipient tokens (issue 30). Every existing key keeps the spec's behaviour: scope
 * `both`, no token required. A key that requires tokens holds its signing secret encrypted
 * (kit's SecretBox), never in clear, and during a rotation's overlap the secret it replaced.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('scope', 'text', (c) =>
      c.notNull().defaultTo('both').check(sql`scope in ('subscribe', 'dispatch', 'both')`),
    )
    .addColumn('require_token', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('signing_secret', 'text')
    .addColumn('previous_signing_secret', 'text')
    .addColumn('previous_secret_until', 'timestamptz')
    .execute();
  await sql`alter table api_keys add constraint api_keys_token_secret_check
    check (not require_token or signing_secret is not null)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropConstraint('api_keys_token_secret_check').execute();
  await db.schema
    .alterTable('api_keys')
    .dropColumn('scope')
    .dropColumn('require_token')
    .dropColumn('signing_secret')
    .dropColumn('previous_signing_secret')
    .dropColumn('previous_secret_until')
    .execute();
}

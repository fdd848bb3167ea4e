import { type Kysely, sql } from 'kysely';

/**
 * Inbox mode per key (issue 32 item 2): the days every event of the key is kept per recipient,
 * with read state on the server. Null (every existing key) keeps the spec's default: live events
 * are not stored.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('inbox_days', 'integer', (c) =>
      c.check(sql`inbox_days is null or inbox_days between 1 and 365`),
    )
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('inbox_days').execute();
}

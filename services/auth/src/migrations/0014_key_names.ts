import { type Kysely, sql } from 'kysely';

/**
 * Key names (issue 45): what a user calls a key ("checkout backend", "staging web"), so five keys
 * no longer differ only by a prefix. Null for every existing key (lists then show the prefix);
 * 1 to 64 characters, trimmed by the API before it is stored.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('name', 'text', (c) =>
      c.check(sql`name is null or char_length(name) between 1 and 64`),
    )
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('name').execute();
}

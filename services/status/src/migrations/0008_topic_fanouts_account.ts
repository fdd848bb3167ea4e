import type { Kysely } from 'kysely';

/**
 * The dashboard's recent topic events (issue 44) read an account's newest snapshots: an index
 * by account and creation time, so that read does not walk every account's.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('topic_fanouts_account_idx')
    .on('topic_fanouts')
    .columns(['account_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('topic_fanouts_account_idx').ifExists().execute();
}

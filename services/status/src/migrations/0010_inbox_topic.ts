import type { Kysely } from 'kysely';

/**
 * A kept event that is a topic event's copy (issue 44) keeps its topic, so an inbox device's
 * catch-up from the store carries `topic` on its frame as the live and queued copies do.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('inbox_events').addColumn('topic', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('inbox_events').dropColumn('topic').execute();
}

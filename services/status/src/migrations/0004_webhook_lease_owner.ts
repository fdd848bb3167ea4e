import { type Kysely, sql } from 'kysely';

/**
 * The sender that holds a message's lease (issue 39's cost): a sender claims ahead, beyond the
 * requests it has in flight, and an endpoint is served by one sender at a time while it holds
 * leases of it, so WEBHOOK_ENDPOINT_CONCURRENCY still bounds the endpoint's requests over every
 * instance. Rows leased before this column existed have none and count as another sender's.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhook_messages add column leased_by text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhook_messages drop column leased_by`.execute(db);
}

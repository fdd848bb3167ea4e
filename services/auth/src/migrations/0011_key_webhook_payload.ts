import type { Kysely } from 'kysely';

/**
 * Delivery-status webhooks (issue 39): a key created with `--webhook-payload` opts in to its
 * events' payloads travelling into its account's webhook bodies. Off for every existing key: a
 * payload may be personal data, and a webhook body carries it only where the sender asked.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('webhook_payload', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('webhook_payload').execute();
}

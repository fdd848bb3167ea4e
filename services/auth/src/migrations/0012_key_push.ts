import { type Kysely, sql } from 'kysely';

/**
 * Push fallback per key (issue 40): a key created with `--push-after-ms N` has its events that no
 * socket proved within N ms pushed to the recipient's push subscriptions. Every column is null for
 * a key that never pushes (every existing key); a push key has its delay, TTL and payload choice,
 * and its template's title and body only where given. The bounds are proto/push.ts's, repeated
 * here so a row written past the code's checks is refused all the same.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('push_after_ms', 'integer', (c) =>
      c.check(sql`push_after_ms is null or push_after_ms between 0 and 3600000`),
    )
    .addColumn('push_ttl_s', 'integer', (c) =>
      c.check(sql`push_ttl_s is null or push_ttl_s between 1 and 2419200`),
    )
    .addColumn('push_title', 'text', (c) =>
      c.check(sql`push_title is null or char_length(push_title) between 1 and 200`),
    )
    .addColumn('push_body', 'text', (c) =>
      c.check(sql`push_body is null or char_length(push_body) <= 1000`),
    )
    .addColumn('push_include_payload', 'boolean')
    .execute();
  // All or nothing: the delay, TTL and payload choice come together; a template needs the delay.
  await sql`alter table api_keys add constraint api_keys_push_check check (
    case when push_after_ms is null
      then push_ttl_s is null and push_title is null and push_body is null
        and push_include_payload is null
      else push_ttl_s is not null and push_include_payload is not null
    end)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropConstraint('api_keys_push_check').execute();
  await db.schema
    .alterTable('api_keys')
    .dropColumn('push_after_ms')
    .dropColumn('push_ttl_s')
    .dropColumn('push_title')
    .dropColumn('push_body')
    .dropColumn('push_include_payload')
    .execute();
}

import { type Kysely, sql } from 'kysely';

/**
 * FCM and APNs (issue 40): a device subscription is a `push_subscriptions` row whose `endpoint`
 * is `kind:token` (one unique index, one cap, one `push_sent` log for every kind) and has no Web
 * Push keys; an account's FCM service account and APNs token key are one row per provider, their
 * public parts in `settings`, the private key sealed under WEBHOOK_SECRET_KEY.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('push_subscriptions')
    .alterColumn('p256dh', (c) => c.dropNotNull())
    .execute();
  await db.schema
    .alterTable('push_subscriptions')
    .alterColumn('auth', (c) => c.dropNotNull())
    .execute();
  await db.schema
    .createTable('push_provider_credentials')
    .addColumn('account_id', 'text', (c) => c.notNull())
    /** `fcm` or `apns`. */
    .addColumn('provider', 'text', (c) => c.notNull())
    /** FCM: project_id, client_email; APNs: key_id, team_id, topic, sandbox. */
    .addColumn('settings', 'jsonb', (c) => c.notNull())
    /** The PEM private key, sealed by kit's SecretBox, bound to account and provider. */
    .addColumn('private_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('push_provider_credentials_pk', ['account_id', 'provider'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('push_provider_credentials').execute();
  await db
    .deleteFrom('push_subscriptions' as never)
    .where('kind' as never, '!=', 'webpush' as never)
    .execute();
  await db.schema
    .alterTable('push_subscriptions')
    .alterColumn('p256dh', (c) => c.setNotNull())
    .execute();
  await db.schema
    .alterTable('push_subscriptions')
    .alterColumn('auth', (c) => c.setNotNull())
    .execute();
}

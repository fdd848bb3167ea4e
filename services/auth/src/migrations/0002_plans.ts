import { type Kysely, sql } from 'kysely';

/**
 * Plans move from `accounts.plan` to `subscriptions`, the one source of an account's plan and of
 * when its paid period ends. Test keys become one (unrevoked) per account.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('subscriptions')
    .addColumn('account_id', 'uuid', (c) =>
      c.primaryKey().references('accounts.id').onDelete('cascade'),
    )
    .addColumn('plan', 'text', (c) => c.notNull())
    // Null: the plan never lapses (the free plan). Paid plans always carry one.
    .addColumn('period_end', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`insert into subscriptions (account_id, plan) select id, plan from accounts`.execute(db);
  await db.schema.alterTable('accounts').dropColumn('plan').execute();

  // Before this migration nothing stopped an account from holding several Test keys; keep the
  // newest usable one and revoke the others, so the index below can hold.
  await sql`
    update api_keys set revoked_at = now()
    where kind = 'test' and revoked_at is null
      and id not in (
        select distinct on (account_id) id from api_keys
        where kind = 'test' and revoked_at is null
        order by account_id, created_at desc, id
      )`.execute(db);
  // The database, not a read-then-insert in the service, is what makes two concurrent
  // "generate my Test key" requests yield one key.
  await db.schema
    .createIndex('api_keys_one_test_key_idx')
    .on('api_keys')
    .column('account_id')
    .unique()
    .where(sql.ref('kind'), '=', 'test')
    .where(sql.ref('revoked_at'), 'is', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('api_keys_one_test_key_idx').execute();
  await db.schema
    .alterTable('accounts')
    .addColumn('plan', 'text', (c) => c.notNull().defaultTo('free'))
    .execute();
  await sql`update accounts a set plan = s.plan from subscriptions s where s.account_id = a.id`.execute(
    db,
  );
  await db.schema.dropTable('subscriptions').execute();
}

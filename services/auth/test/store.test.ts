import { hashKey } from '@herald/access';
import { createDb } from '@herald/kit';
import { HeraldError } from '@herald/proto';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, findAccount } from '../src/accounts.js';
import type { AuthDb } from '../src/db-schema.js';
import { KEY_LENGTH } from '../src/keys/key-spec.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../src/keys/store.js';
import { createMigrator, MIGRATION_TABLE, migrateToLatest } from '../src/migrate.js';
import { type Servers, startServers } from './servers.js';

let servers: Servers;
let db: Kysely<AuthDb>;

beforeAll(async () => {
  servers = await startServers({ nats: false });
  db = servers.db;
});
afterAll(() => servers?.stop());

describe('migrations', () => {
  it('apply on an empty database, then find nothing to do', async () => {
    await sql`create database migrations_empty`.execute(db);
    const fresh = createDb<AuthDb>(servers.pg.url.replace(/\/herald$/, '/migrations_empty'), 2);
    try {
      expect(await migrateToLatest(fresh)).toEqual([
        '0001_init',
        '0002_plans',
        '0003_account_api',
        '0004_dashboard',
        '0005_billing',
        '0006_dashboard_keys',
        '0007_key_tokens',
        '0008_nats_users',
        '0009_key_inbox',
        '0010_key_unsigned_recipients',
        '0011_key_webhook_payload',
        '0012_key_push',
        '0013_pusher_apps',
        '0014_key_names',
      ]);
      expect(await migrateToLatest(fresh)).toEqual([]);
      const tables = await sql<{ table_name: string }>`
        select table_name from information_schema.tables where table_schema = 'public' order by 1`.execute(
        fresh,
      );
      expect(tables.rows.map((r) => r.table_name)).toEqual([
        'accounts',
        'api_keys',
        MIGRATION_TABLE,
        `${MIGRATION_TABLE}_lock`,
        'dashboard_keys',
        'nats_users',
        'password_resets',
        'payment_events',
        'payments',
        'pusher_apps',
        'renewal_reminders',
        'sessions',
        'subscriptions',
      ]);
      const index = await sql<{ indexdef: string }>`
        select indexdef from pg_indexes where indexname = 'api_keys_account_id_idx'`.execute(fresh);
      expect(index.rows[0]?.indexdef).toMatch(/\(account_id\)/);
    } finally {
      await fresh.destroy();
    }
  });
});

describe('migration 0002_plans on existing data', () => {
  it('moves each account’s plan to subscriptions and keeps one usable Test key per account', async () => {
    await sql`create database migrations_data`.execute(db);
    const old = createDb<AuthDb>(servers.pg.url.replace(/\/herald$/, '/migrations_data'), 2);
    try {
      const { error } = await createMigrator(old).migrateTo('0001_init');
      expect(error).toBeUndefined();
      const [account] = (
        await sql<{ id: string }>`
          insert into accounts (email, plan) values ('old@example.com', 'hobby') returning id`.execute(
          old,
        )
      ).rows;
      const id = account?.id ?? '';
      // Three Test keys, as `make dev` made before 0002 when each one expired.
      for (const [n, at] of [
        [1, '2025-01-01T00:00:00Z'],
        [2, '2025-01-02T00:00:00Z'],
        [3, '2025-01-03T00:00:00Z'],
      ] as const) {
        await sql`insert into api_keys (account_id, key_hash, key_prefix, kind, client, created_at)
                  values (${id}, ${`hash-${n}`}, 'hk_test_xxxx', 'test', 'mobile', ${at})`.execute(
          old,
        );
      }
      expect(await migrateToLatest(old)).toEqual([
        '0002_plans',
        '0003_account_api',
        '0004_dashboard',
        '0005_billing',
        '0006_dashboard_keys',
        '0007_key_tokens',
        '0008_nats_users',
        '0009_key_inbox',
        '0010_key_unsigned_recipients',
        '0011_key_webhook_payload',
        '0012_key_push',
        '0013_pusher_apps',
        '0014_key_names',
      ]);
      const subs = await sql<{ plan: string; period_end: Date | null }>`
        select plan, period_end from subscriptions where account_id = ${id}`.execute(old);
      expect(subs.rows).toEqual([{ plan: 'hobby', period_end: null }]);
      const keys = await sql<{ key_hash: string; revoked: boolean }>`
        select key_hash, revoked_at is not null as revoked from api_keys order by key_hash`.execute(
        old,
      );
      expect(keys.rows).toEqual([
        { key_hash: 'hash-1', revoked: true },
        { key_hash: 'hash-2', revoked: true },
        { key_hash: 'hash-3', revoked: false },
      ]);
    } finally {
      await old.destroy();
    }
  });
});

describe('accounts', () => {
  it('stores the email lower-cased with the free plan by default', async () => {
    const account = await createAccount(db, { email: '  Alice@Example.COM ' });
    expect(account).toMatchObject({ email: 'alice@example.com', plan: 'free', period_end: null });
    expect(account.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await findAccount(db, account.id.toUpperCase())).toEqual(account);
  });

  it('creates the account and its subscription together', async () => {
    const until = new Date('2030-01-01T00:00:00Z');
    const account = await createAccount(
      db,
      { email: 'paid@example.com' },
      { plan: { id: 'hobby' }, period_end: until },
    );
    expect(account).toMatchObject({ plan: 'hobby', period_end: until });
    const sub = await db
      .selectFrom('subscriptions')
      .selectAll()
      .where('account_id', '=', account.id)
      .executeTakeFirstOrThrow();
    expect(sub).toMatchObject({ plan: 'hobby', period_end: until });
  });

  it('refuses a second account for the same address in any case, with 409', async () => {
    await createAccount(db, { email: 'bob@example.com' });
    const err = await createAccount(db, { email: 'BOB@example.com' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HeraldError);
    expect(err).toMatchObject({
      code: 'account_exists',
      status: 409,
      field: 'email',
      message: expect.stringMatching(/already has an account/),
    });
  });

  it('refuses a bad email, naming the field', async () => {
    await expect(createAccount(db, { email: 'not-an-address' })).rejects.toMatchObject({
      field: 'email',
    });
    await expect(
      createAccount(db, { email: `${'a'.repeat(243)}@example.com` }),
    ).rejects.toMatchObject({
      field: 'email',
      message: expect.stringMatching(/at most 254/),
    });
  });

  it('accepts an email of exactly 254 characters', async () => {
    const email = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`;
    expect(email).toHaveLength(254);
    expect((await createAccount(db, { email })).email).toBe(email);
  });
});

describe('api keys', () => {
  it('stores only the hash and the prefix, never the key', async () => {
    const account = await createAccount(db, { email: 'keys@example.com' });
    const created = await createApiKey(db, account.id, {
      kind: 'live',
      client: 'web',
      domain: 'https://App.Example.com:443/',
    });
    expect(created.key).toHaveLength(KEY_LENGTH);
    expect(created).toMatchObject({
      kind: 'live',
      client: 'web',
      domain: 'https://app.example.com',
    });
    expect(created.expires_at).toBeNull();

    const rows = await sql<
      Record<string, unknown>
    >`select * from api_keys where id = ${created.id}`.execute(db);
    const row = rows.rows[0];
    expect(row).toBeDefined();
    expect(row?.key_hash).toBe(hashKey(created.key));
    expect(row?.key_prefix).toBe(created.key.slice(0, 12));
    const body = created.key.slice(12);
    for (const value of Object.values(row ?? {})) {
      expect(String(value)).not.toContain(created.key);
      expect(String(value)).not.toContain(body);
    }
  });

  it('gives a test key an expiry exactly 4 hours after creation', async () => {
    const account = await createAccount(db, { email: 'expiry@example.com' });
    const now = new Date('2025-06-01T08:00:00.000Z');
    const created = await createApiKey(db, account.id, { kind: 'test', client: 'mobile' }, now);
    const row = await db
      .selectFrom('api_keys')
      .select(['created_at', 'expires_at'])
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(row.created_at.toISOString()).toBe('2025-06-01T08:00:00.000Z');
    expect(row.expires_at?.toISOString()).toBe('2025-06-01T12:00:00.000Z');
  });

  it('creates distinct keys for one account', async () => {
    const account = await createAccount(db, { email: 'many@example.com' });
    const keys = await Promise.all(
      Array.from({ length: 20 }, () =>
        createApiKey(db, account.id, { kind: 'live', client: 'mobile' }),
      ),
    );
    expect(new Set(keys.map((k) => k.key)).size).toBe(20);
    expect(new Set(keys.map((k) => k.id)).size).toBe(20);
  });

  it('refuses a web key without a domain before touching the database', async () => {
    const account = await createAccount(db, { email: 'nodomain@example.com' });
    await expect(
      createApiKey(db, account.id, { kind: 'live', client: 'web' }),
    ).rejects.toMatchObject({
      field: 'domain',
    });
    expect(await listApiKeys(db, account.id)).toEqual([]);
  });

  it('refuses an unknown or malformed account id, naming account', async () => {
    await expect(
      createApiKey(db, '6b1c3a4e-1111-4111-8111-111111111111', { kind: 'live', client: 'mobile' }),
    ).rejects.toMatchObject({ code: 'not_found', field: 'account' });
    await expect(
      createApiKey(db, 'acct-1', { kind: 'live', client: 'mobile' }),
    ).rejects.toMatchObject({
      field: 'account',
      message: expect.stringMatching(/must be a UUID/),
    });
    await expect(listApiKeys(db, '6b1c3a4e-1111-4111-8111-111111111111')).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  it('lists keys without keys or hashes, and revokes idempotently', async () => {
    const account = await createAccount(db, { email: 'list@example.com' });
    const a = await createApiKey(db, account.id, { kind: 'live', client: 'mobile' });
    const b = await createApiKey(db, account.id, {
      kind: 'test',
      client: 'web',
      domain: 'http://localhost:5173',
    });
    const listed = await listApiKeys(db, account.id);
    expect(listed.map((k) => k.id).sort()).toEqual([a.id, b.id].sort());
    for (const k of listed) {
      expect(Object.keys(k).sort()).toEqual([
        'account_id',
        'allow_unsigned_recipients',
        'client',
        'created_at',
        'domain',
        'expires_at',
        'id',
        'inbox_days',
        'key_prefix',
        'kind',
        'name',
        'push_after_ms',
        'push_body',
        'push_include_payload',
        'push_title',
        'push_ttl_s',
        'require_token',
        'revoked_at',
        'scope',
        'webhook_payload',
      ]);
    }

    const first = await revokeApiKey(db, a.id);
    expect(first.revoked_at).toBeInstanceOf(Date);
    const again = await revokeApiKey(db, a.id);
    expect(again.revoked_at).toEqual(first.revoked_at);
    await expect(revokeApiKey(db, '6b1c3a4e-1111-4111-8111-111111111111')).rejects.toMatchObject({
      code: 'not_found',
      field: 'key',
    });
  });

  it('deletes an account’s keys with the account', async () => {
    const account = await createAccount(db, { email: 'cascade@example.com' });
    await createApiKey(db, account.id, { kind: 'live', client: 'mobile' });
    await db.deleteFrom('accounts').where('id', '=', account.id).execute();
    const left = await db
      .selectFrom('api_keys')
      .select('id')
      .where('account_id', '=', account.id)
      .execute();
    expect(left).toEqual([]);
  });
});

import { createDb } from '@herald/kit';
import type { RefusalRecord } from '@herald/proto';
import { type PostgresServer, startPostgres } from '@herald/testkit';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { StatusDb } from '../src/db-schema.js';
import { migrateToLatest } from '../src/migrate.js';
import { keyRefusals, writeRefusals } from '../src/refusals/store.js';
import { uuid } from './support.js';

/** The refusal store (issue 45) on a real Postgres: merging, the per-key bound, isolation. */
let pg: PostgresServer;
let db: Kysely<StatusDb>;
beforeAll(async () => {
  pg = await startPostgres();
  db = createDb<StatusDb>(pg.url, 4);
  await migrateToLatest(db);
});
afterAll(async () => {
  await db?.destroy();
  await pg?.stop();
});

const T0 = Date.parse('2026-11-29T12:00:00Z');
const rec = (over: Partial<RefusalRecord> = {}): RefusalRecord => ({
  status: 403,
  code: 'rate_limited',
  field: 'api_key',
  origin: null,
  route: '/notify',
  count: 1,
  first_at: T0,
  last_at: T0,
  ...over,
});
const write = (account: string, key: string, records: RefusalRecord[], perKey = 3, mergeMs = 0) =>
  writeRefusals(db, { v: 1, account_id: account, key_id: key, records }, { perKey, mergeMs });

describe('the refusal store', () => {
  it('keeps exactly REFUSALS_PER_KEY rows per key, the newest, and each key its own', async () => {
    const account = uuid();
    for (let i = 0; i < 5; i++) {
      await write(account, 'k1', [rec({ field: `f${i}`, first_at: T0 + i, last_at: T0 + i })]);
    }
    await write(account, 'k2', [rec()]);
    const rows = await keyRefusals(db, account, 'k1', 200);
    expect(rows.map((r) => r.field)).toEqual(['f4', 'f3', 'f2']);
    expect(await keyRefusals(db, account, 'k2', 200)).toHaveLength(1);
    // Another account, even with the same key id, reads none of them.
    expect(await keyRefusals(db, uuid(), 'k1', 200)).toEqual([]);
  });

  it('merges a record into the last of its kind within REFUSAL_MERGE_MS, not beyond', async () => {
    const account = uuid();
    await write(account, 'k', [rec({ count: 5 })], 50, 1000);
    await write(
      account,
      'k',
      [rec({ count: 2, first_at: T0 + 1000, last_at: T0 + 1500 })],
      50,
      1000,
    );
    let rows = await keyRefusals(db, account, 'k', 200);
    expect(rows.map((r) => [r.count, r.first_at, r.last_at])).toEqual([
      [7, new Date(T0).toISOString(), new Date(T0 + 1500).toISOString()],
    ]);
    // 1001 ms after the last one: a new row.
    await write(account, 'k', [rec({ first_at: T0 + 2501, last_at: T0 + 2501 })], 50, 1000);
    // Another kind (another Origin) never merges.
    await write(
      account,
      'k',
      [rec({ origin: 'https://a.test', first_at: T0 + 2502, last_at: T0 + 2502 })],
      50,
      1000,
    );
    rows = await keyRefusals(db, account, 'k', 200);
    expect(rows.map((r) => [r.origin, r.count])).toEqual([
      ['https://a.test', 1],
      [null, 1],
      [null, 7],
    ]);
  });

  it('has its settings at their documented defaults and edges', () => {
    const base = { TLS_DISABLED: 'true', DATABASE_URL: 'postgres://h:h@127.0.0.1:5432/h' };
    expect(loadConfig(base)).toMatchObject({ REFUSALS_PER_KEY: 50, REFUSAL_MERGE_MS: 60_000 });
    expect(loadConfig({ ...base, REFUSALS_PER_KEY: '1', REFUSAL_MERGE_MS: '0' })).toMatchObject({
      REFUSALS_PER_KEY: 1,
      REFUSAL_MERGE_MS: 0,
    });
    expect(
      loadConfig({ ...base, REFUSALS_PER_KEY: '1000', REFUSAL_MERGE_MS: '3600000' }),
    ).toMatchObject({ REFUSALS_PER_KEY: 1000, REFUSAL_MERGE_MS: 3_600_000 });
    expect(() => loadConfig({ ...base, REFUSALS_PER_KEY: '0' })).toThrow('REFUSALS_PER_KEY');
    expect(() => loadConfig({ ...base, REFUSALS_PER_KEY: '1001' })).toThrow('REFUSALS_PER_KEY');
    expect(() => loadConfig({ ...base, REFUSAL_MERGE_MS: '3600001' })).toThrow('REFUSAL_MERGE_MS');
  });
});

import { createDb } from '@herald/kit';
import { type PostgresServer, startPostgres } from '@herald/testkit';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusDb } from '../src/db-schema.js';
import { migrateToLatest } from '../src/migrate.js';
import { claimGroups } from '../src/push/claim.js';
import { uuid } from './support.js';

/** The claim alone, on a Postgres no sender runs against. */
let pg: PostgresServer;
let db: Kysely<StatusDb>;
beforeAll(async () => {
  pg = await startPostgres();
  db = createDb<StatusDb>(pg.url, 8);
  await migrateToLatest(db);
});
afterAll(async () => {
  await db?.destroy();
  await pg?.stop();
});

describe('claimGroups', () => {
  it('never hands one event, nor one recipient, to two senders claiming at once', async () => {
    const account = uuid();
    const recipients = Array.from({ length: 50 }, () => uuid());
    const past = new Date(Date.now() - 5000);
    const rows = recipients.flatMap((recipient) =>
      Array.from({ length: 4 }, () => ({
        event_id: uuid(),
        account_id: account,
        key_id: 'key-1',
        recipient,
        at: past,
        due_at: past,
        expires_at: new Date(Date.now() + 600_000),
        spec: JSON.stringify({ after_ms: 0, ttl_s: 600, title: 'x' }),
      })),
    );
    await db.insertInto('push_due').values(rows).execute();
    const workers = ['w1', 'w2', 'w3', 'w4'];
    const claims = await Promise.all(
      workers.map((worker) => claimGroups(db, { worker, max: 60, leaseMs: 60_000, coalesceMs: 0 })),
    );
    const events = claims.flat().flatMap((g) => g.events.map((e) => e.id));
    const mine = events.filter((id) => rows.some((r) => r.event_id === id));
    expect(mine.length).toBe(new Set(mine).size);
    expect(mine.length).toBe(rows.length);
    const owners = new Map<string, number>();
    for (const g of claims.flat()) owners.set(g.recipient, (owners.get(g.recipient) ?? 0) + 1);
    for (const r of recipients) expect(owners.get(r), r).toBe(1);
    for (const g of claims.flat()) expect(g.events).toHaveLength(4);
    await db.deleteFrom('push_due').where('account_id', '=', account).execute();
  });
});

describe('claimGroups: leases and proofs', () => {
  const row = (account: string, recipient: string, dueInMs: number) => {
    const t = new Date(Date.now() + dueInMs);
    return {
      event_id: uuid(),
      account_id: account,
      key_id: 'key-1',
      recipient,
      at: t,
      due_at: t,
      expires_at: new Date(Date.now() + 600_000),
      spec: JSON.stringify({ after_ms: 0, ttl_s: 600, title: 'x' }),
    };
  };

  it('takes a recipient again once its lease ran out; waits for its coalescing time; drops proved events', async () => {
    const [account, recipient] = [uuid(), uuid()];
    const fresh = row(account, recipient, -50);
    await db.insertInto('push_due').values(fresh).execute();
    // Due 50 ms ago, coalescing 1 s: not yet.
    expect(await claimGroups(db, { worker: 'a', max: 10, leaseMs: 100, coalesceMs: 1000 })).toEqual(
      [],
    );
    const [g] = await claimGroups(db, { worker: 'a', max: 10, leaseMs: 100, coalesceMs: 0 });
    expect(g?.events.map((e) => e.id)).toEqual([fresh.event_id]);
    expect(await claimGroups(db, { worker: 'b', max: 10, leaseMs: 100, coalesceMs: 0 })).toEqual(
      [],
    );
    await new Promise((r) => setTimeout(r, 150));
    const [again] = await claimGroups(db, { worker: 'b', max: 10, leaseMs: 100, coalesceMs: 0 });
    expect(again?.attempts).toBe(2);
    await new Promise((r) => setTimeout(r, 150));
    // Proved meanwhile: deleted at the next claim, never handed out.
    await db
      .insertInto('status_events')
      .values({
        id: fresh.event_id,
        account_id: account,
        key_id: 'key-1',
        recipient,
        sent_at: null,
        queued_at: new Date(),
        delivered_at: new Date(),
        failed_at: null,
        reason: null,
        created_at: new Date(),
      })
      .execute();
    expect(await claimGroups(db, { worker: 'c', max: 10, leaseMs: 100, coalesceMs: 0 })).toEqual(
      [],
    );
    const left = await db
      .selectFrom('push_due')
      .select('event_id')
      .where('account_id', '=', account)
      .execute();
    expect(left).toEqual([]);
  });
});

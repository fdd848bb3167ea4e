import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { type PostgresServer, startPostgres } from '@herald/testkit';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, dbReady } from './db.js';

let pg: PostgresServer;
beforeAll(async () => {
  pg = await startPostgres();
}, 120_000);
afterAll(async () => {
  await pg?.stop();
});

/** Kills every other session of the database, as a Postgres restart or failover does. */
async function dropConnections(): Promise<void> {
  const admin = createDb(pg.url, 1);
  try {
    await sql`select pg_terminate_backend(pid) from pg_stat_activity
              where pid <> pg_backend_pid() and datname = current_database()`.execute(admin);
  } finally {
    await admin.destroy();
  }
}

describe('createDb when Postgres drops connections', () => {
  it('fails the queries in flight without an uncaught error, then serves again', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    const heard: Error[] = [];
    const db = createDb(pg.url, 4, (err) => heard.push(err));
    try {
      // Checked-out clients, each in the middle of a query: the case pg-pool does not cover.
      const running = Array.from({ length: 4 }, () =>
        sql`select pg_sleep(30)`.execute(db).then(
          () => 'finished',
          () => 'failed',
        ),
      );
      await waitFor(async () => (await sleepingSessions()) === 4);
      await dropConnections();
      expect(await Promise.all(running)).toEqual(['failed', 'failed', 'failed', 'failed']);
      // Every dropped connection was heard by the listener, not thrown.
      await waitFor(() => heard.length >= 4);
      expect(uncaught).toEqual([]);
      // The pool discarded the dead clients: the next queries open new connections.
      await waitFor(() => dbReady(db));
      const { rows } = await sql<{ n: number }>`select 1 as n`.execute(db);
      expect(rows).toEqual([{ n: 1 }]);
    } finally {
      process.off('uncaughtException', onUncaught);
      await db.destroy();
    }
  }, 60_000);
});

/** The private cluster's processes (postmaster and backends), found by its port. */
function clusterPids(): number[] {
  const list = (args: string[]) =>
    execFileSync('pgrep', args, { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  const postmaster = list(['-f', `postgres -D .* -p ${pg.port}`]).find(
    (pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres',
  );
  if (postmaster === undefined) throw new Error(`no postgres listening on ${pg.port}`);
  let children: number[] = [];
  try {
    children = list(['-P', String(postmaster)]);
  } catch {
    // pgrep exits 1 when there is none.
  }
  return [postmaster, ...children];
}

// Found by an audit: with Postgres stopped (SIGSTOP: it accepts nothing and answers nothing, as a
// hung server or a partitioned network), /readyz of auth and status never answered at all.
describe('dbReady when Postgres does not answer', () => {
  it('says false within its bound, shares one query among probes, and true once Postgres is back', async () => {
    const db = createDb(pg.url, 2);
    let stopped: number[] = [];
    try {
      expect(await dbReady(db)).toBe(true);
      // Listed after the first query, so the backend of the pool's open connection is among them.
      stopped = clusterPids();
      for (const pid of stopped) process.kill(pid, 'SIGSTOP');
      // Twenty probes at once, more than the pool's two connections: each answers false.
      expect(await Promise.all(Array.from({ length: 20 }, () => dbReady(db, 500)))).toEqual(
        Array.from({ length: 20 }, () => false),
      );
      for (const pid of stopped) process.kill(pid, 'SIGCONT');
      await waitFor(() => dbReady(db));
    } finally {
      for (const pid of stopped) process.kill(pid, 'SIGCONT');
      await db.destroy();
    }
  }, 60_000);
});

async function sleepingSessions(): Promise<number> {
  const probe = createDb(pg.url, 1);
  try {
    const { rows } = await sql<{ n: string }>`select count(*) as n from pg_stat_activity
      where datname = current_database() and query = 'select pg_sleep(30)' and state = 'active'`.execute(
      probe,
    );
    return Number(rows[0]?.n ?? 0);
  } finally {
    await probe.destroy();
  }
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

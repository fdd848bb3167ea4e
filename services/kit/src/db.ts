import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';

/** A Kysely instance over a pg pool. `max` bounds the connections this process holds. */
export function createDb<DB>(databaseUrl: string, max = 10): Kysely<DB> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max });
  // When Postgres drops an idle connection (restart, failover, admin kill) pg-pool emits 'error',
  // which would crash the process with no listener. The pool has already discarded that client;
  // the next query opens a new one, and /readyz reports Postgres down meanwhile.
  pool.on('error', () => {});
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}

/** True when Postgres answers (for /readyz). */
export async function dbReady(db: Kysely<unknown>): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}

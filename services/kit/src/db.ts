import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';

/**
 * A Kysely instance over a pg pool. `max` bounds the connections this process holds.
 * `onConnectionError` hears connections Postgres dropped (for a log line); it must not throw.
 */
export function createDb<DB>(
  databaseUrl: string,
  max = 10,
  onConnectionError: (err: Error) => void = () => {},
): Kysely<DB> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max });
  // When Postgres drops an idle connection (restart, failover, admin kill) pg-pool emits 'error',
  // which would crash the process with no listener. The pool has already discarded that client;
  // the next query opens a new one, and /readyz reports Postgres down meanwhile.
  pool.on('error', onConnectionError);
  // pg-pool listens for errors only on idle clients: a checked-out client whose connection drops
  // (mid-query, or between a transaction's queries) emits 'error' itself, after failing its
  // queries, and with no listener that is an uncaught exception (`read ECONNRESET`, `Connection
  // terminated unexpectedly`) that kills the process. Every client gets a listener of its own;
  // the failed query still rejects, and the pool discards the client on release (not queryable).
  pool.on('connect', (client) => {
    client.on('error', onConnectionError);
  });
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

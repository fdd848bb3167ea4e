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
  // A Postgres that accepts TCP but never answers (a hung or stopped server) would otherwise hold
  // a new connection's attempt forever; the query waiting for it fails after this instead.
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max,
    connectionTimeoutMillis: DB_CONNECT_TIMEOUT_MS,
  });
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

/** How long a new Postgres connection may take to open, ms. */
export const DB_CONNECT_TIMEOUT_MS = 5000;
/** How long a readiness probe waits for Postgres to answer, ms. */
export const DB_PROBE_TIMEOUT_MS = 1000;

/** The probe still waiting for Postgres, per database: probes made meanwhile share it. */
const probing = new WeakMap<Kysely<unknown>, Promise<boolean>>();

/**
 * True when Postgres answers `select 1` within `timeoutMs` (the `postgres` check of /readyz).
 * Without the bound, a Postgres that stopped answering (not refusing) left /readyz hanging with
 * no answer at all, and the other checks' results with it. Probes made while one is waiting share
 * its query, so a hung server cannot take the pool's every connection one probe at a time.
 */
export async function dbReady(
  db: Kysely<unknown>,
  timeoutMs = DB_PROBE_TIMEOUT_MS,
): Promise<boolean> {
  let answered = probing.get(db);
  if (!answered) {
    const query = sql`select 1`.execute(db).then(
      () => true,
      () => false,
    );
    answered = query;
    probing.set(db, query);
    void query.finally(() => {
      if (probing.get(db) === query) probing.delete(db);
    });
  }
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([answered, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

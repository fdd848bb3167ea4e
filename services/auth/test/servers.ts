import { createDb } from '@herald/kit';
import {
  type NatsServer,
  type PostgresServer,
  startNatsServer,
  startPostgres,
} from '@herald/testkit';
import type { Kysely } from 'kysely';
import type { AuthDb } from '../src/db-schema.js';
import { migrateToLatest } from '../src/migrate.js';

export interface Servers {
  pg: PostgresServer;
  nats: NatsServer | undefined;
  /** A migrated database on `pg`. */
  db: Kysely<AuthDb>;
  stop(): Promise<void>;
}

/** A private Postgres (migrated) and, when asked, a private nats-server, for one test file. */
export async function startServers(opts: { nats: boolean }): Promise<Servers> {
  const [pg, nats] = await Promise.all([
    startPostgres(),
    opts.nats ? startNatsServer() : Promise.resolve(undefined),
  ]);
  const db = createDb<AuthDb>(pg.url, 4);
  await migrateToLatest(db);
  return {
    pg,
    nats,
    db,
    async stop() {
      await db.destroy();
      await Promise.all([pg.stop(), nats?.stop()]);
    },
  };
}

/** The nats-server of servers started with `nats: true`. */
export function natsOf(servers: { nats: NatsServer | undefined }): NatsServer {
  if (!servers.nats) throw new Error('these servers were started without nats');
  return servers.nats;
}

import { randomUUID } from 'node:crypto';
import { createDb, createLogger } from '@herald/kit';
import type { Resolver } from '@herald/outbound';
import type { NatsUser } from '@herald/testkit';
import {
  type NatsServer,
  type PostgresServer,
  startNatsServer,
  startPostgres,
} from '@herald/testkit';
import type { Kysely } from 'kysely';
import { connect, type NatsConnection } from 'nats';
import { loadConfig } from '../src/config.js';
import type { StatusDb } from '../src/db-schema.js';
import { migrateToLatest } from '../src/migrate.js';
import { createStatusService, type StatusService } from '../src/service.js';

/** A status service in this process on a private nats-server and Postgres, its clock settable. */
export interface InboxFixture {
  nats: NatsServer;
  pg: PostgresServer;
  db: Kysely<StatusDb>;
  service: StatusService;
  /** Logged in as `user` (its own permissions), closed with the fixture. */
  client(user: NatsUser): Promise<NatsConnection>;
  /** The service's clock: epoch ms; tests move it. */
  clock: { now: number };
  close(): Promise<void>;
}

export async function startInboxFixture(
  env: Record<string, string> = {},
  extra: { resolver?: Resolver } = {},
): Promise<InboxFixture> {
  const [nats, pg] = await Promise.all([startNatsServer(), startPostgres()]);
  const db = createDb<StatusDb>(pg.url, 5);
  await migrateToLatest(db);
  const nc = await connect(nats.connectOptions('status'));
  const clock = { now: Date.now() };
  const config = loadConfig({
    ...nats.env('status'),
    DATABASE_URL: pg.url,
    TLS_DISABLED: 'true',
    LOG_LEVEL: process.env.TEST_LOG ?? 'silent',
    ...env,
  });
  const service = createStatusService(config, {
    nc,
    db,
    logger: createLogger('status', (process.env.TEST_LOG ?? 'silent') as 'silent'),
    now: () => clock.now,
    ...extra,
  });
  await service.start();
  const clients: NatsConnection[] = [];
  return {
    nats,
    pg,
    db,
    service,
    clock,
    async client(user) {
      const c = await connect(nats.connectOptions(user));
      clients.push(c);
      return c;
    },
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      await service.close();
      await nc.close();
      await db.destroy();
      await Promise.all([nats.stop(), pg.stop()]);
    },
  };
}

export const uuid = (): string => randomUUID();

export async function request(nc: NatsConnection, subject: string, body: unknown) {
  const msg = await nc.request(subject, JSON.stringify(body), { timeout: 10_000 });
  return JSON.parse(new TextDecoder().decode(msg.data));
}

export { eventually } from '@herald/testkit';

import {
  checkConfigFiles,
  closeServer,
  connectNats,
  createDb,
  createLogger,
  createServer,
  exitOnStartupError,
  handleShutdown,
  listen,
  startOpsServer,
} from '@herald/kit';
import { loadConfig } from './config.js';
import type { AuthDb } from './db-schema.js';
import { createAuthService } from './index.js';
import { migrateToLatest } from './migrate.js';
import { loadPlanCatalogue, resolvePlansFile } from './plan-catalogue.js';

async function main(): Promise<void> {
  const config = loadConfig();
  checkConfigFiles('auth', config);
  const logger = createLogger('auth', config.LOG_LEVEL);
  // Read before anything connects: a bad catalogue stops the start with the file and field named.
  const plansFile = resolvePlansFile(config.PLANS_FILE);
  const catalogue = loadPlanCatalogue(plansFile);
  logger.info({ plansFile, plans: catalogue.plans.map((p) => p.id) }, 'plan catalogue loaded');
  const db = createDb<AuthDb>(config.DATABASE_URL, config.DB_POOL_MAX, (err) =>
    // The message only (no connection string): the pool replaces the connection by itself.
    logger.warn({ err: err.message }, 'a Postgres connection dropped'),
  );
  if (config.MIGRATE_ON_START) {
    const applied = await migrateToLatest(db);
    logger.info({ applied }, applied.length ? 'migrations applied' : 'schema up to date');
  }
  const nc = await connectNats(config, 'herald-auth', logger);
  const service = createAuthService(config, { nc, db, logger, catalogue });
  const server = createServer(config, service.handler);
  const ops = await startOpsServer(config, service.opsHandler);
  const port = await listen(server, config.PORT, config.HOST);
  logger.info(
    { port, tls: !config.TLS_DISABLED, opsPort: ops.port, opsHost: config.OPS_HOST },
    'listening',
  );

  handleShutdown(
    logger,
    async () => {
      // Stop answering first so requests move to the other instances of the queue group.
      await service.close();
      await Promise.all([closeServer(server), ops.close()]);
      await db.destroy();
      await nc.drain();
    },
    config.SHUTDOWN_TIMEOUT_MS,
  );
}

main().catch((err: unknown) => exitOnStartupError('auth', err));

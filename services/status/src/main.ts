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
import type { StatusDb } from './db-schema.js';
import { createStatusService } from './index.js';
import { migrateToLatest } from './migrate.js';

async function main(): Promise<void> {
  const config = loadConfig();
  checkConfigFiles('status', config);
  const logger = createLogger('status', config.LOG_LEVEL);
  const db = createDb<StatusDb>(config.DATABASE_URL, config.DB_POOL_MAX);
  if (config.MIGRATE_ON_START) {
    const applied = await migrateToLatest(db);
    logger.info({ applied }, applied.length ? 'migrations applied' : 'schema up to date');
  }
  const nc = await connectNats(config, 'herald-status', logger);
  const service = createStatusService(config, { nc, db, logger });
  await service.start();
  const server = createServer(config, service.handler);
  const port = await listen(server, config.PORT, config.HOST);
  const ops = await startOpsServer(config, service.opsHandler);
  logger.info({ port, opsPort: ops.port, opsHost: config.OPS_HOST }, 'listening');
  handleShutdown(
    logger,
    async () => {
      await service.close();
      await closeServer(server);
      await ops.close();
      await nc.drain();
      await db.destroy();
    },
    config.SHUTDOWN_TIMEOUT_MS,
  );
}

main().catch((err: unknown) => exitOnStartupError('status', err));

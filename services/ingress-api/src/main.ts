import {
  checkConfigFiles,
  connectNats,
  createLogger,
  exitOnStartupError,
  handleShutdown,
} from '@herald/kit';
import { createIngress, loadConfig } from './index.js';

async function main(): Promise<void> {
  const config = loadConfig();
  checkConfigFiles('ingress-api', config);
  const logger = createLogger('ingress-api', config.LOG_LEVEL);
  const nc = await connectNats(config, 'herald-ingress-api', logger);
  const ingress = createIngress(config, { nc, logger });
  const port = await ingress.start();
  logger.info({ port, opsPort: ingress.opsPort, opsHost: config.OPS_HOST }, 'listening');
  handleShutdown(
    logger,
    async () => {
      await ingress.close();
      await nc.drain();
    },
    config.SHUTDOWN_TIMEOUT_MS,
  );
}

main().catch((err: unknown) => exitOnStartupError('ingress-api', err));

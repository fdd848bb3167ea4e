import {
  checkConfigFiles,
  connectNats,
  createLogger,
  exitOnStartupError,
  handleShutdown,
} from '@herald/kit';
import { loadConfig } from './config.js';
import { createEdge } from './index.js';

const SERVICE = 'socket-edge';

try {
  const config = loadConfig();
  checkConfigFiles('socket-edge', config);
  const logger = createLogger(SERVICE, config.LOG_LEVEL);
  const nc = await connectNats(config, SERVICE, logger);
  const edge = createEdge(config, { nc, logger });
  const port = await edge.start();
  logger.info({ port, opsPort: edge.opsPort, opsHost: config.OPS_HOST }, 'listening');
  handleShutdown(logger, () => edge.close(), config.SHUTDOWN_TIMEOUT_MS);
} catch (err) {
  exitOnStartupError(SERVICE, err);
}

import {
  checkConfigFiles,
  closeServer,
  connectNats,
  createLogger,
  createServer,
  exitOnStartupError,
  handleShutdown,
  listen,
  startOpsServer,
} from '@herald/kit';
import { loadConfig, loadRunOnceConfig } from './config.js';
import { withDevEnv } from './dev-env.js';
import { createRetention } from './index.js';

const USAGE =
  'usage: retention            run the service (schedule + ops endpoints)\n       retention run-once   one pass now; prints a JSON summary\n';

async function serve(): Promise<void> {
  const config = loadConfig();
  checkConfigFiles('retention', config);
  const logger = createLogger('retention', config.LOG_LEVEL);
  const nc = await connectNats(config, 'herald-retention', logger);
  const retention = createRetention(config, { nc, logger });
  const server = createServer(config, retention.handler);
  const ops = await startOpsServer(config, retention.opsHandler);
  const port = await listen(server, config.PORT, config.HOST);
  logger.info({ port, opsPort: ops.port, opsHost: config.OPS_HOST }, 'listening');
  retention.start();
  handleShutdown(
    logger,
    async () => {
      // A run in progress stops between two events: every recipient is left consistent.
      await retention.close();
      await Promise.all([closeServer(server), ops.close()]);
      await nc.drain();
    },
    config.SHUTDOWN_TIMEOUT_MS,
  );
}

/**
 * One pass, then exit: 0 completed, 2 skipped (another instance holds the lock), 1 otherwise.
 * Logs go to stderr so stdout carries only the summary. With NATS_URL unset, `.data/dev.env`
 * (written by `make dev`) supplies it.
 */
async function runOnce(): Promise<void> {
  const { env, loaded } = withDevEnv(process.env);
  const config = loadRunOnceConfig(env);
  const logger = createLogger('retention', config.LOG_LEVEL, process.stderr);
  if (loaded) logger.info({ file: loaded }, 'NATS_URL unset: using the make dev stack');
  const nc = await connectNats(config, 'herald-retention-run-once', logger).catch(
    (err: unknown) => {
      const hint = loaded ? ` (from ${loaded}: is \`make dev\` running?)` : '';
      // The error names NATS_URL with its passwords hidden (kit's connectNats).
      throw new Error(`${err instanceof Error ? err.message : String(err)}${hint}`);
    },
  );
  const retention = createRetention(config, { nc, logger });
  const stop = () => void retention.close();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const summary = await retention.runOnce('manual');
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  await retention.close();
  await nc.drain();
  process.exitCode = summary.outcome === 'completed' ? 0 : summary.outcome === 'skipped' ? 2 : 1;
}

const command = process.argv[2];
if (command === undefined) {
  serve().catch((err: unknown) => exitOnStartupError('retention', err));
} else if (command === 'run-once') {
  runOnce().catch((err: unknown) => exitOnStartupError('retention run-once', err));
} else {
  process.stderr.write(`unknown command ${JSON.stringify(command)}\n${USAGE}`);
  process.exitCode = 64;
}

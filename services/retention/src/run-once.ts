import { connectNats, createLogger } from '@herald/kit';
import { loadRunOnceConfig } from './config.js';
import { withDevEnv } from './dev-env.js';
import { createRetention } from './service.js';

/**
 * `retention run-once`: one pass, then exit: 0 completed, 2 skipped (another instance holds the
 * lock), 1 otherwise. Logs go to stderr so stdout carries only the summary. With NATS_URL unset,
 * `.data/dev.env` (written by `make dev`) supplies it.
 */
export async function runOnce(): Promise<void> {
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

import type { Logger } from './logger.js';

/**
 * Maps SIGTERM and SIGINT to one graceful `close()`, then exits. A second signal, or `close()`
 * outliving `timeoutMs`, exits at once with status 1.
 */
export function handleShutdown(
  logger: Logger,
  close: () => Promise<void>,
  timeoutMs: number,
): void {
  let closing = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (closing) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    closing = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error({ timeoutMs }, 'shutdown timed out: exiting');
      process.exit(1);
    }, timeoutMs);
    timer.unref();
    close().then(
      () => {
        logger.info('shut down cleanly');
        logger.flush?.();
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}

/** Logs a startup failure (a ConfigError's message lists every bad variable) and exits 1. */
export function exitOnStartupError(service: string, err: unknown): never {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`${service} failed to start: ${message}\n`);
  process.exit(1);
}

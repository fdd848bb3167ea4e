import type { NatsConnection } from 'nats';
import { RunLock } from './run-lock.js';

/**
 * The JetStream manager and the run lock, each opened on first use and opened again after a
 * failure (JetStream may be down when the service starts, and come back).
 */
export function jetStreamHandles(
  nc: NatsConnection,
  settings: { apiTimeoutMs: number; lockTtlMs: number; replicas?: number },
) {
  return {
    manager: reopening(() => nc.jetstreamManager({ timeout: settings.apiTimeoutMs })),
    runLock: reopening(() =>
      RunLock.open(
        nc.jetstream({ timeout: settings.apiTimeoutMs }),
        settings.lockTtlMs,
        settings.replicas,
      ),
    ),
  };
}

function reopening<T>(open: () => Promise<T>): () => Promise<T> {
  let current: Promise<T> | undefined;
  return () => {
    current ??= open();
    current.catch(() => {
      current = undefined;
    });
    return current;
  };
}

import { ensureKvBucket, type Logger } from '@herald/kit';
import type { JetStreamManager, NatsConnection } from 'nats';
import { CONNECTIONS_BUCKET, type ConnectionCounts } from './connection-counts.js';

/** Delay between attempts to bind the connection-count bucket while JetStream is unreachable, ms. */
const BIND_RETRY_MS = 2000;

/** Binds the counts to their bucket; while JetStream is unreachable, keeps trying in the background. */
export function bindCountsInBackground(
  counts: ConnectionCounts,
  deps: {
    nc: NatsConnection;
    jsm: Promise<JetStreamManager>;
    logger: Logger;
    bucket: { ttlMs: number; replicas: number };
    closing: () => boolean;
  },
): { bind(): Promise<void>; stop(): void } {
  let retry: NodeJS.Timeout | undefined;
  let failures = 0;
  const bind = async (): Promise<void> => {
    if (deps.closing()) return;
    try {
      const kv = await ensureKvBucket(
        deps.nc.jetstream(),
        await deps.jsm,
        CONNECTIONS_BUCKET,
        deps.bucket,
      );
      if (!deps.closing()) counts.start(kv);
    } catch (err) {
      // Said once at error level; the retries every BIND_RETRY_MS only at debug.
      deps.logger[failures++ === 0 ? 'error' : 'debug'](
        { err: String(err), bucket: CONNECTIONS_BUCKET },
        'cannot bind the connection-count bucket: the cap counts this edge only until it can',
      );
      retry = setTimeout(() => void bind(), BIND_RETRY_MS);
      retry.unref();
    }
  };
  return { bind, stop: () => clearTimeout(retry) };
}

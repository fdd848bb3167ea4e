import type { Logger } from '@herald/kit';
import { measureQueueDepth, QueueApi, type QueueDepth, QueueLayout } from '@herald/queue';
import type { JetStreamManager, NatsConnection } from 'nats';
import type { RetentionMetrics } from './metrics.js';
import { RateLimiter } from './rate-limiter.js';

export interface DepthRefreshDeps {
  nc: NatsConnection;
  manager: () => Promise<JetStreamManager>;
  metrics: Pick<RetentionMetrics, 'queueDepth'>;
  logger: Logger;
  settings: { apiRate: number; apiTimeoutMs: number; partitions?: number };
}

/** Recomputes the per-account queue depth gauges (one stream info call per partition); never rejects. */
export function createDepthRefresh(deps: DepthRefreshDeps) {
  return async function refreshQueueDepth(): Promise<QueueDepth | undefined> {
    try {
      const jsm = await deps.manager();
      const limiter = new RateLimiter(deps.settings.apiRate);
      const apis = new QueueLayout(deps.settings.partitions).streams.map(
        (stream) =>
          new QueueApi(deps.nc, jsm, limiter, { stream, timeoutMs: deps.settings.apiTimeoutMs }),
      );
      const depth = await measureQueueDepth(apis, Date.now());
      if (depth) deps.metrics.queueDepth(depth);
      return depth;
    } catch (err) {
      deps.logger.warn({ err: String(err) }, 'could not measure queue depth');
      return undefined;
    }
  };
}

import type { Logger } from '@herald/kit';
import type { TurnPublisher } from '@herald/nats';
import type { NatsConnection } from 'nats';
import type { EdgeMetrics } from '../metrics.js';
import type { DrainTarget } from '../queue/drain-context.js';
import type { QueueDrainer } from '../queue/queue-drainer.js';

/** What every session of the edge shares, built once by the edge. */
export interface SessionContext {
  nc: NatsConnection;
  /**
   * The edge's one turn publisher. Each live reply is sent when its socket write completes, and
   * those completions come one per callback, so sent at once every reply was its own write to
   * nats-server. Deferred to the end of the loop turn, the turn's replies share one write, with
   * the turn's status records.
   */
  publisher: Pick<TurnPublisher, 'publish'>;
  /** Delay after the start before the queue is checked once more, ms. */
  recheckMs: number;
  metrics: Pick<EdgeMetrics, 'liveDeliveries'>;
  logger: Logger;
  /**
   * Builds the session's drain over its sockets; `previous` is the close of the recipient's last
   * session on this edge when still running (the drain's first check waits for it).
   */
  drainFor: (session: DrainTarget, previous: Promise<void> | undefined) => QueueDrainer;
}

import type { Logger } from '@herald/kit';
import { queueGroups } from '@herald/proto';
import type { Msg, NatsConnection, Subscription } from 'nats';

export interface NatsDispatchServer {
  /** Stops taking new dispatches and resolves once every one in flight has been answered. */
  close(): Promise<void>;
}

/**
 * Serves requests on `subject` in the ingress queue group (one instance answers each), each handled
 * concurrently (one slow live push, up to LIVE_TIMEOUT_MS, must not hold up the rest); `close`
 * drains the subscription and waits for every handler in flight.
 */
export function serveIngressRequests(
  nc: NatsConnection,
  subject: string,
  logger: Logger,
  handle: (msg: Msg) => Promise<void>,
): NatsDispatchServer {
  const inFlight = new Set<Promise<void>>();
  const sub: Subscription = nc.subscribe(subject, {
    queue: queueGroups.ingress,
    callback: (err, msg) => {
      if (err) {
        logger.warn({ err: String(err), subject }, 'dispatch subscription error');
        return;
      }
      const task = handle(msg).finally(() => inFlight.delete(task));
      inFlight.add(task);
    },
  });
  return {
    async close() {
      if (!sub.isClosed()) await sub.drain();
      await Promise.allSettled([...inFlight]);
    },
  };
}

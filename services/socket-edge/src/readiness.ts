import { natsReady } from '@herald/kit';
import type { NatsConnection } from 'nats';

/** How long /readyz waits for the NATS server to answer a PING, ms. */
const PROBE_TIMEOUT_MS = 1000;

/**
 * The edge's readiness: NATS answers a round trip. Every connect needs NATS (key verification,
 * the recipient's subscriptions, the queue), so an edge whose connection is down or reconnecting
 * would refuse every connect with 503: a load balancer must not send it any. Looking at the
 * connection's state alone is not enough (a client that is reconnecting is neither closed nor
 * draining), so each check sends a PING; nats.js holds it while reconnecting, and the check fails
 * when no PONG comes within PROBE_TIMEOUT_MS.
 */
export function natsReadiness(nc: NatsConnection): () => Promise<{ nats: boolean }> {
  return async () => {
    if (!natsReady(nc)) return { nats: false };
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
    });
    const answered = nc.flush().then(
      () => true,
      () => false,
    );
    const nats = await Promise.race([answered, timedOut]);
    clearTimeout(timer);
    return { nats };
  };
}

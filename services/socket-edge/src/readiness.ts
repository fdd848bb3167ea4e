import { natsAnswers } from '@herald/kit';
import type { NatsConnection } from 'nats';

/**
 * The edge's readiness: NATS answers a round trip (kit's `natsAnswers`, every service's check).
 * Every connect needs NATS (key verification, the recipient's subscriptions, the queue), so an
 * edge whose connection is down or reconnecting would refuse every connect with 503: a load
 * balancer must not send it any.
 */
export function natsReadiness(nc: NatsConnection): () => Promise<{ nats: boolean }> {
  return async () => ({ nats: await natsAnswers(nc) });
}

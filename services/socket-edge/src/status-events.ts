import { type StatusEvent, subjects } from '@herald/proto';
import type { NatsConnection } from 'nats';

/**
 * Publishes that a queued event was delivered (acked after the client's proof of receipt), as a
 * status record for the status service. A core-NATS publish into the status stream: the edge
 * never waits on it, and a failure here never touches delivery.
 */
export function publishDelivered(
  nc: NatsConnection,
  account: string,
  recipient: string,
  id: string,
): void {
  const event: StatusEvent = {
    v: 1,
    id,
    account_id: account,
    recipient,
    status: 'delivered',
    at: Date.now(),
  };
  try {
    nc.publish(subjects.status(account), JSON.stringify(event));
  } catch {
    // The connection is closing: the ack itself already happened.
  }
}

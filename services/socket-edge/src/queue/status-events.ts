import type { StatusEvent } from '@herald/proto';
import type { StatusBatcher } from '@herald/status-client';

/**
 * Publishes that a queued event was delivered (acked after the client's proof of receipt), as a
 * status record for the status service. The edge's one batcher (on its one turn publisher, with
 * the live replies) sends the records of one event-loop turn (a drain burst's acks) as one
 * core-NATS message per account into the status stream: the edge never waits on it, and a failure
 * here never touches delivery.
 */
export function publishDelivered(
  batcher: Pick<StatusBatcher, 'add'>,
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
  batcher.add(event);
}

import { TurnPublisher } from '@herald/nats';
import type { StatusEvent } from '@herald/proto';
import { StatusBatcher } from '@herald/status-client';
import type { NatsConnection } from 'nats';

/**
 * One batcher per connection, on a turn publisher of its own (status records only): the records
 * of one event-loop turn leave as one message per account at the turn's end.
 */
const batchers = new WeakMap<NatsConnection, StatusBatcher>();

/**
 * Publishes that a queued event was delivered (acked after the client's proof of receipt), as a
 * status record for the status service. The records of one event-loop turn (a drain burst's acks)
 * leave as one core-NATS message per account into the status stream (`StatusBatcher`, with its
 * default bounds): the edge never waits on it, and a failure here never touches delivery.
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
  let batcher = batchers.get(nc);
  if (!batcher) {
    batcher = new StatusBatcher(new TurnPublisher(nc));
    batchers.set(nc, batcher);
  }
  batcher.add(event);
}

import type { Publisher } from '@herald/nats';
import type { NatsConnection } from 'nats';
import { Counter, Gauge, type Registry } from 'prom-client';
import { type StatusAckOptions, StatusAcks } from './status-acks.js';

/**
 * A process's {@link StatusAcks}, its series registered on `registry`: what it holds
 * unacknowledged (messages, bytes), what it dropped over STATUS_PENDING_MAX_BYTES (records lost)
 * and what it published again.
 */
export function createStatusAcks(
  nc: Pick<NatsConnection, 'subscribe' | 'status'>,
  publisher: Publisher,
  opts: Omit<StatusAckOptions, 'onDropped' | 'onRepublished'>,
  registry: Registry,
): StatusAcks {
  const registers = [registry];
  const dropped = new Counter({
    name: 'herald_status_messages_dropped_total',
    help: 'Status messages dropped unacknowledged because the held bytes passed STATUS_PENDING_MAX_BYTES (their records are lost)',
    registers,
  });
  const republished = new Counter({
    name: 'herald_status_messages_republished_total',
    help: 'Status messages published again: not acknowledged by the status stream within STATUS_ACK_TIMEOUT_MS (backoff), refused, or no stream listening',
    registers,
  });
  const acks = new StatusAcks(nc, publisher, {
    ...opts,
    onDropped: (n) => dropped.inc(n),
    onRepublished: (n) => republished.inc(n),
  });
  new Gauge({
    name: 'herald_status_messages_pending',
    help: 'Status messages published and not yet acknowledged by the status stream',
    registers,
    collect() {
      this.set(acks.pending);
    },
  });
  new Gauge({
    name: 'herald_status_pending_bytes',
    help: 'Payload bytes of the status messages not yet acknowledged (bounded by STATUS_PENDING_MAX_BYTES)',
    registers,
    collect() {
      this.set(acks.pendingBytes);
    },
  });
  return acks;
}

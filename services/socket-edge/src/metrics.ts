import { Counter, Gauge, type Registry } from 'prom-client';
import type { Framing } from './socket/framing.js';

/** The edge's Prometheus series, registered on the service's registry. */
export interface EdgeMetrics {
  openSockets: Gauge<'framing'>;
  liveDeliveries: Counter;
  queuedDeliveries: Counter;
  rejections: Counter<'code'>;
  slowConsumerCloses: Counter;
  activeDrainers: Gauge;
  queueChecksWaiting: Gauge;
  malformedClientFrames: Counter;
}

export function createEdgeMetrics(registry: Registry): EdgeMetrics {
  const registers = [registry];
  const openSockets = new Gauge({
    name: 'herald_open_sockets',
    help: 'Open WebSockets on this edge, by framing (plain, herald.v1, or pusher for /app/{key})',
    labelNames: ['framing'] as const,
    registers,
  });
  for (const framing of ['plain', 'herald.v1'] satisfies Framing[]) openSockets.set({ framing }, 0);
  // The Pusher door's sockets (src/pusher/), whatever they are members of.
  openSockets.set({ framing: 'pusher' }, 0);
  return {
    openSockets,
    liveDeliveries: new Counter({
      name: 'herald_live_deliveries_total',
      help: 'Live events written to a socket (one per socket whose write completed)',
      registers,
    }),
    queuedDeliveries: new Counter({
      name: 'herald_queued_deliveries_total',
      help: 'Queued events acked in JetStream (proven received: a plain pong or a herald.v1 ack)',
      registers,
    }),
    rejections: new Counter({
      name: 'herald_socket_rejections_total',
      help: 'Connects refused or sockets closed by policy, by error code',
      labelNames: ['code'] as const,
      registers,
    }),
    slowConsumerCloses: new Counter({
      name: 'herald_slow_consumer_closes_total',
      help: 'Sockets closed with 1013 because their unproven events or bytes reached MAX_UNPROVEN_EVENTS / MAX_UNPROVEN_BYTES',
      registers,
    }),
    activeDrainers: new Gauge({
      name: 'herald_active_drainers',
      help: 'Recipients whose offline queue this edge is consuming right now',
      registers,
    }),
    queueChecksWaiting: new Gauge({
      name: 'herald_queue_checks_waiting',
      help: 'Queue checks waiting for a slot under QUEUE_CHECK_CONCURRENCY',
      registers,
    }),
    malformedClientFrames: new Counter({
      name: 'herald_malformed_client_frames_total',
      help: 'herald.v1 client frames that were not a valid ack (ignored)',
      registers,
    }),
  };
}

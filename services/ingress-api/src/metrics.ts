import { Counter, Histogram, type Registry } from 'prom-client';

/** How a dispatch came: `POST /notify`, a NATS subject, or the Pusher HTTP API (its durable events). */
export type Transport = 'http' | 'nats' | 'pusher';

export interface IngressMetrics {
  dispatches: Counter<'transport' | 'outcome'>;
  refused: Counter<'code'>;
  duration: Histogram<'transport' | 'outcome'>;
  queuePublishes: Counter<'result'>;
  /** Pusher HTTP API requests (issue 41) by route and outcome (`ok`, `refused`, `failed`). */
  pusherRequests: Counter<'route' | 'outcome'>;
  /** Topic fan-out chunks this instance finished (issue 44): `acked`, `retried`, `dropped`. */
  fanoutChunks: Counter<'result'>;
  /** Copies in the chunks this instance acked. */
  fanoutCopies: Counter;
  /** Refusals the refusal log did not hold, a bound being reached (issue 45). */
  refusalsDropped?: Counter;
}

export function createIngressMetrics(registry: Registry): IngressMetrics {
  return {
    dispatches: new Counter({
      name: 'herald_dispatch_total',
      help: 'Dispatch requests by transport and outcome',
      labelNames: ['transport', 'outcome'],
      registers: [registry],
    }),
    refused: new Counter({
      name: 'herald_dispatch_refused_total',
      help: 'Refused dispatch requests by error code',
      labelNames: ['code'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'herald_dispatch_duration_seconds',
      help: 'Time from receiving a dispatch to its answer',
      labelNames: ['transport', 'outcome'],
      // Live pushes answer in well under a millisecond; the top buckets catch live timeouts
      // (1 s default) and slow JetStream acks (5 s default).
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    queuePublishes: new Counter({
      name: 'herald_queue_publish_total',
      help: 'JetStream publishes to the offline queue by result',
      labelNames: ['result'],
      registers: [registry],
    }),
    fanoutChunks: new Counter({
      name: 'herald_fanout_chunks_total',
      help: 'Topic fan-out chunks this instance finished, by result (acked, retried, dropped)',
      labelNames: ['result'],
      registers: [registry],
    }),
    fanoutCopies: new Counter({
      name: 'herald_fanout_copies_total',
      help: "Members' copies in the topic fan-out chunks this instance acked",
      registers: [registry],
    }),
    refusalsDropped: new Counter({
      name: 'herald_refusals_dropped_total',
      help: 'Refusals not recorded for the dashboard: REFUSAL_KEYS_MAX or REFUSAL_KINDS_PER_KEY_MAX reached',
      registers: [registry],
    }),
    pusherRequests: new Counter({
      name: 'herald_pusher_requests_total',
      help: 'Pusher HTTP API requests by route (events, batch_events, user_events, terminate_connections) and outcome (ok, refused, failed)',
      labelNames: ['route', 'outcome'],
      registers: [registry],
    }),
  };
}

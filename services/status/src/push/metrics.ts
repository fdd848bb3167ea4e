import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * What became of one push to one subscription, or of a recipient's due events, as
 * `herald_push_messages_total{provider,result}` labels it.
 */
export const PUSH_RESULTS = [
  /** The push service accepted it (201, 200 or 202). */
  'success',
  /** 404 or 410: the subscription is gone and was deleted. */
  'gone',
  /** 413 even without the payload. */
  'too_large',
  /** 400, 401, 403 or another 4xx: given up (a configuration alarm for 400/401/403). */
  'rejected',
  /** 429, a 5xx, a timeout or no answer: retried later. */
  'retry',
  /** Retried for the last time (the schedule or the TTL ran out). */
  'exhausted',
  /** The address rule refused the endpoint. */
  'refused',
  /** Due events of a recipient without subscriptions: dropped. */
  'no_subscription',
  /** Due events of an account without VAPID credentials (or a key that no longer opens): dropped. */
  'unconfigured',
  /** Due events whose TTL passed before they could go: dropped. */
  'expired',
] as const;
export type PushResult = (typeof PUSH_RESULTS)[number];

/** @param due reads the number of due rows at each scrape */
export function createPushMetrics(registry: Registry, due?: () => Promise<number>) {
  return {
    messages: new Counter({
      name: 'herald_push_messages_total',
      help: 'Pushes by provider and result (per subscription; no_subscription, unconfigured and expired count events)',
      labelNames: ['provider', 'result'],
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'herald_push_request_seconds',
      help: "A push service's answer time",
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    lateness: new Histogram({
      name: 'herald_push_lateness_seconds',
      help: 'From the newest covered event falling due to its first push attempt',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60],
      registers: [registry],
    }),
    due: new Gauge({
      name: 'herald_push_due_rows',
      help: 'Events waiting for their push or its retry (read at each scrape)',
      registers: [registry],
      async collect() {
        if (!due) return;
        try {
          this.set(await due());
        } catch {
          // Postgres unreachable: the last value stays; /readyz says why.
        }
      },
    }),
  };
}
export type PushMetrics = ReturnType<typeof createPushMetrics>;

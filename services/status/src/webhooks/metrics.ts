import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The webhook sender's results, as `herald_webhook_attempts_total{result}` labels them. */
export const ATTEMPT_RESULTS = [
  'success',
  'http_error',
  'timeout',
  'network',
  'refused',
  'unsigned',
] as const;
export type AttemptResult = (typeof ATTEMPT_RESULTS)[number];

/** @param depth reads the queue depth when the metrics are scraped */
export function createWebhookMetrics(registry: Registry, depth?: () => Promise<number>) {
  return {
    enqueued: new Counter({
      name: 'herald_webhook_enqueued_total',
      help: 'Webhook messages put in the outbox',
      registers: [registry],
    }),
    dropped: new Counter({
      name: 'herald_webhook_dropped_total',
      help: 'Webhook messages not enqueued: their endpoint held WEBHOOK_ENDPOINT_QUEUE_MAX',
      registers: [registry],
    }),
    attempts: new Counter({
      name: 'herald_webhook_attempts_total',
      help: 'Attempts to send a webhook message, by result (success: a 2xx; http_error: another status; timeout; network: no answer; refused: the address rule; unsigned: the secret could not be opened)',
      labelNames: ['result'],
      registers: [registry],
    }),
    failed: new Counter({
      name: 'herald_webhook_messages_failed_total',
      help: 'Webhook messages failed for good: their retry schedule was exhausted',
      registers: [registry],
    }),
    disabled: new Counter({
      name: 'herald_webhook_endpoints_disabled_total',
      help: 'Endpoints disabled by the sender (410 Gone, or failing for WEBHOOK_DISABLE_AFTER_MS)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    lag: new Histogram({
      name: 'herald_webhook_lag_seconds',
      help: 'From a transition to the first attempt to send its message',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'herald_webhook_queue_depth',
      help: 'Webhook messages waiting to be sent or retried, over every endpoint (read at each scrape)',
      registers: [registry],
      async collect() {
        if (!depth) return;
        try {
          this.set(await depth());
        } catch {
          // Postgres unreachable: the last value stays; /readyz says why.
        }
      },
    }),
  };
}
export type WebhookMetrics = ReturnType<typeof createWebhookMetrics>;

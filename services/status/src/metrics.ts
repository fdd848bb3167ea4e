import { Counter, Histogram, type Registry } from 'prom-client';
import { createPushMetrics } from './push/metrics.js';
import { createWebhookMetrics } from './webhooks/metrics.js';

/**
 * @param webhookQueueDepth reads the webhook queue depth at each scrape
 * @param pushDue reads the push due rows at each scrape
 */
export function createStatusMetrics(
  registry: Registry,
  webhookQueueDepth?: () => Promise<number>,
  pushDue?: () => Promise<number>,
) {
  return {
    records: new Counter({
      name: 'herald_status_records_written_total',
      help: 'Status records written to Postgres',
      registers: [registry],
    }),
    batches: new Counter({
      name: 'herald_status_batches_total',
      help: 'Batches committed',
      registers: [registry],
    }),
    failedBatches: new Counter({
      name: 'herald_status_batches_failed_total',
      help: 'Batches whose transaction failed (their records are redelivered)',
      registers: [registry],
    }),
    invalid: new Counter({
      name: 'herald_status_records_invalid_total',
      help: 'Records on the status stream that were not a valid StatusEvent (dropped)',
      registers: [registry],
    }),
    batchSeconds: new Histogram({
      name: 'herald_status_batch_seconds',
      help: 'Time to write one batch',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    webhooks: createWebhookMetrics(registry, webhookQueueDepth),
    push: createPushMetrics(registry, pushDue),
  };
}
export type StatusMetrics = ReturnType<typeof createStatusMetrics>;

import { type Logger, SecretBox } from '@herald/kit';
import { OutboundClient, type Resolver } from '@herald/outbound';
import type { Kysely } from 'kysely';
import type { NatsConnection, Subscription } from 'nats';
import type { StatusConfig } from '../config.js';
import type { StatusDb } from '../db-schema.js';
import { trustedCas } from '../trusted-cas.js';
import { serveWebhookApi } from './api-responder.js';
import type { WebhookMetrics } from './metrics.js';
import type { EnqueueResult } from './outbox.js';
import { WebhookSender } from './sender.js';

export interface WebhooksDeps {
  nc: NatsConnection;
  db: Kysely<StatusDb>;
  logger: Logger;
  metrics: WebhookMetrics;
  now: () => number;
  /** How names are resolved, for both the create check and every request (tests inject one). */
  resolver?: Resolver;
}

/** The webhooks wing of the status service: the endpoint API, the outbox's reporting, the sender. */
export interface Webhooks {
  /** What the writer and the inbox store call after a transaction that enqueued messages. */
  written(r: EnqueueResult): void;
  /** Answers the endpoint API and starts sending. */
  start(): Subscription;
  /** Stops claiming and lets requests in flight finish (WEBHOOK_DRAIN_MS). */
  stop(): Promise<void>;
}

export function createWebhooks(config: StatusConfig, deps: WebhooksDeps): Webhooks {
  const { logger, metrics } = deps;
  const box = config.WEBHOOK_SECRET_KEY ? new SecretBox(config.WEBHOOK_SECRET_KEY) : undefined;
  const client = new OutboundClient({
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    maxResponseBytes: config.WEBHOOK_RESPONSE_MAX_BYTES,
    ca: trustedCas(config.WEBHOOK_CA_FILE),
    ...(deps.resolver ? { resolver: deps.resolver } : {}),
  });
  const sender = new WebhookSender(
    { db: deps.db, logger, metrics, box, client },
    {
      concurrency: config.WEBHOOK_CONCURRENCY,
      perEndpoint: config.WEBHOOK_ENDPOINT_CONCURRENCY,
      prefetch: config.WEBHOOK_ENDPOINT_PREFETCH,
      claimBatch: config.WEBHOOK_CLAIM_BATCH,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      schedule: config.WEBHOOK_RETRY_SCHEDULE,
      disableAfterMs: config.WEBHOOK_DISABLE_AFTER_MS,
      attemptsKept: config.WEBHOOK_ATTEMPTS_KEPT,
      pollMs: config.WEBHOOK_POLL_MS,
      drainMs: config.WEBHOOK_DRAIN_MS,
    },
  );
  const queueMax = config.WEBHOOK_ENDPOINT_QUEUE_MAX;
  return {
    written({ queued, dropped }) {
      if (queued > 0) {
        metrics.enqueued.inc(queued);
        sender.wake();
      }
      for (const [endpoint, n] of dropped) {
        metrics.dropped.inc(n);
        logger.warn(
          { endpoint, dropped: n, max: queueMax },
          'webhook messages dropped: the endpoint holds WEBHOOK_ENDPOINT_QUEUE_MAX waiting',
        );
      }
    },
    start() {
      if (config.WEBHOOK_ALLOW_PRIVATE) {
        logger.warn(
          'WEBHOOK_ALLOW_PRIVATE=true: webhooks may reach loopback, private and link-local addresses and http:// URLs (development only; docs/security.md)',
        );
      }
      sender.start();
      return serveWebhookApi({
        nc: deps.nc,
        db: deps.db,
        logger,
        box,
        allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
        overlapMs: config.WEBHOOK_SECRET_OVERLAP_MS,
        queueMax,
        now: deps.now,
        queued: () => sender.wake(),
        ...(deps.resolver ? { resolver: deps.resolver } : {}),
      });
    },
    stop: () => sender.stop(),
  };
}

import { type Logger, SecretBox } from '@herald/kit';
import { OutboundClient, type Resolver } from '@herald/outbound';
import type { Kysely } from 'kysely';
import type { NatsConnection, Subscription } from 'nats';
import type { StatusConfig } from '../config.js';
import type { StatusDb } from '../db-schema.js';
import { trustedCas } from '../trusted-cas.js';
import type { PushMetrics } from './metrics.js';
import { PushProviders } from './providers.js';
import { servePushApi } from './responder.js';
import { PushSender } from './sender.js';

/** Bytes of a push service's answer read (then discarded): they say nothing Herald uses. */
const RESPONSE_MAX_BYTES = 16 * 1024;

export interface PushDeps {
  nc: NatsConnection;
  db: Kysely<StatusDb>;
  logger: Logger;
  metrics: PushMetrics;
  /** How push endpoints' names are resolved (tests inject one). */
  resolver?: Resolver;
}

/** The push wing of the status service: the push API, the due timer, the sender. */
export interface Push {
  /** What the writer calls after a commit that made a push due. */
  due(at: Date): void;
  /** Answers the push API and starts sending. */
  start(): Subscription;
  /** Stops claiming and lets requests in flight finish (WEBHOOK_DRAIN_MS). */
  stop(): Promise<void>;
}

export function createPush(config: StatusConfig, deps: PushDeps): Push {
  const { logger, metrics } = deps;
  const box = config.WEBHOOK_SECRET_KEY ? new SecretBox(config.WEBHOOK_SECRET_KEY) : undefined;
  const ca = trustedCas(config.PUSH_CA_FILE);
  const providers = () =>
    new PushProviders(
      deps.db,
      box,
      new OutboundClient({
        allowPrivate: config.PUSH_ALLOW_PRIVATE,
        timeoutMs: config.PUSH_TIMEOUT_MS,
        maxResponseBytes: RESPONSE_MAX_BYTES,
        ca,
        ...(deps.resolver ? { resolver: deps.resolver } : {}),
      }),
      {
        fcmOrigin: config.FCM_ORIGIN,
        fcmTokenUri: config.FCM_TOKEN_URI,
        apnsOrigin: config.APNS_ORIGIN,
        apnsSandboxOrigin: config.APNS_SANDBOX_ORIGIN,
        allowPrivate: config.PUSH_ALLOW_PRIVATE,
        ca,
        timeoutMs: config.PUSH_TIMEOUT_MS,
        maxResponseBytes: RESPONSE_MAX_BYTES,
        ...(deps.resolver ? { resolver: deps.resolver } : {}),
      },
    );
  const sender = new PushSender(
    { db: deps.db, logger, metrics, providers: providers() },
    {
      concurrency: config.PUSH_CONCURRENCY,
      claimBatch: config.PUSH_CLAIM_BATCH,
      timeoutMs: config.PUSH_TIMEOUT_MS,
      pollMs: config.PUSH_POLL_MS,
      coalesceMs: config.PUSH_COALESCE_MS,
      schedule: config.PUSH_RETRY_SCHEDULE,
      drainMs: config.WEBHOOK_DRAIN_MS,
    },
  );
  const apiProviders = providers();
  return {
    due: (at) => sender.due(at),
    start() {
      if (config.PUSH_ALLOW_PRIVATE) {
        logger.warn(
          'PUSH_ALLOW_PRIVATE=true: pushes may reach loopback, private and link-local addresses and http:// endpoints (development only; docs/security.md)',
        );
      }
      sender.start();
      return servePushApi({
        nc: deps.nc,
        db: deps.db,
        logger,
        metrics,
        box,
        providers: apiProviders,
        defaultSubject: config.PUSH_VAPID_SUBJECT,
        cap: config.PUSH_SUBSCRIPTIONS_PER_RECIPIENT_MAX,
        allowPrivate: config.PUSH_ALLOW_PRIVATE,
      });
    },
    async stop() {
      await sender.stop();
      apiProviders.close();
    },
  };
}

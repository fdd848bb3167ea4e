import type { KeyVerifier } from '@herald/access';
import { type AuthFailureLimiter, isAuthFailure, type Logger, type NatsLink } from '@herald/kit';
import { NatsRequester, TurnPublisher } from '@herald/nats';
import type { QueueLayout, RecipientDepth } from '@herald/queue';
import { StatusBatcher } from '@herald/status-client';
import type { JetStreamClient, NatsConnection } from 'nats';
import { accept } from './accept.js';
import { type Caller, createAuthorise } from './authorise.js';
import { createBatchDispatch } from './batch.js';
import type { IngressConfig } from './config.js';
import { createDeliver } from './deliver.js';
import { fingerprintOf, IdempotencyStore } from './idempotency.js';
import { createIdempotentDelivery } from './idempotent-delivery.js';
import { createLiveBatch } from './live-batch.js';
import type { IngressMetrics } from './metrics.js';
import { refuseWhileDown } from './nats-outage.js';
import type { DispatchRateLimiter } from './rate-limiter.js';
import type { DispatchResult } from './results.js';
import { withStatusEvents } from './status-events.js';

export interface DispatchInput extends Caller {
  /** The body's bytes, as received. */
  body: Uint8Array;
  /** The Idempotency-Key header, if any. */
  idempotencyKey?: string | undefined;
  /**
   * The address the request came from (HTTP), for the failed-authentication limit. NATS
   * dispatches come from the operator's own services and have none.
   */
  source?: string | undefined;
}

export interface DispatcherDeps {
  nc: NatsConnection;
  js: JetStreamClient;
  verifier: KeyVerifier;
  config: IngressConfig;
  /** Which partition stream holds a recipient's queue (QUEUE_PARTITIONS). */
  layout: QueueLayout;
  metrics: IngressMetrics;
  logger: Logger;
  /** The per-source limit of failed authentications (403 auth_failures); none when absent. */
  authFailures?: AuthFailureLimiter;
  /** The per-key dispatch rate limit (403 rate_limited); none when absent. */
  rateLimiter?: DispatchRateLimiter;
  /** The plan's per-recipient queue cap (507 queue_full); only the stream's ceiling when absent. */
  recipientDepth?: RecipientDepth;
  /** The NATS connection's state: a dispatch is refused at once while it is down (NATS_OUTAGE_GRACE_MS). */
  link?: NatsLink;
  /** Epoch ms; injectable for tests. Default Date.now. */
  now?: () => number;
}

export interface Dispatcher {
  /**
   * The one dispatch path behind HTTP and NATS. Resolves with the result to answer; throws the
   * HeraldError of a refused request (or a bug), which the transport's error boundary answers.
   */
  dispatch(input: DispatchInput): Promise<DispatchResult>;
  /** The batch path (batch.ts): one result per event, in order; throws a whole-request refusal. */
  dispatchBatch(input: DispatchInput): Promise<DispatchResult[]>;
}

/** nats-server's default max_payload, for a connection whose INFO is not known yet. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

/**
 * Wires the named steps of a dispatch: accept (parse + validate) → authorise → idempotency →
 * deliver (live or queue). The transport answers (the fifth step, `answer.ts`). Each step gets
 * only what it reads.
 */
export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { nc, js, config, logger } = deps;
  const now = deps.now ?? Date.now;
  // Every NATS message of the dispatch path (live push, JetStream publish, notice, status record)
  // leaves at the end of its turn, so a turn's messages share one socket write (turn-publisher.ts).
  const publisher = new TurnPublisher(nc);
  const requester = new NatsRequester(nc, { publisher });
  const limits = { payloadLimitBytes: config.PAYLOAD_LIMIT_BYTES };
  const authorise = createAuthorise({
    verifier: deps.verifier,
    rateLimiter: deps.rateLimiter,
    now,
  });
  const store = new IdempotencyStore(js, {
    staleAfterMs: config.LIVE_TIMEOUT_MS + config.PUBLISH_TIMEOUT_MS,
    now,
  });
  const deliverOnce = createIdempotentDelivery(store, logger);
  // Every answer of the deliver step is also a status record (fire-and-forget, never awaited);
  // a turn's records leave as one message per account, through the same turn publisher.
  const deliver = withStatusEvents(
    new StatusBatcher(publisher, {
      maxRecords: config.STATUS_PUBLISH_MAX_RECORDS,
      maxBytes: config.STATUS_PUBLISH_MAX_BYTES,
    }),
    createDeliver({
      publisher,
      requester,
      layout: deps.layout,
      recipientDepth: deps.recipientDepth,
      metrics: deps.metrics,
      logger,
      limits: {
        liveTimeoutMs: config.LIVE_TIMEOUT_MS,
        publishTimeoutMs: config.PUBLISH_TIMEOUT_MS,
        queueMaxPerRecipient: config.QUEUE_MAX_PER_RECIPIENT,
      },
      now,
    }),
  );

  return {
    async dispatch(input) {
      const { source } = input;
      // First of all: a source sending bad keys is refused before it costs a parse or a lookup.
      if (source !== undefined) deps.authFailures?.check(source);
      try {
        const { request, payload, idempotencyKey } = accept(input, limits);
        refuseWhileDown(deps.link);
        const key = await authorise(request, input);
        const target = { key, account: key.account_id, recipient: request.recipient, payload };
        // What the Idempotency-Key promises to repeat: a reuse with another body is a 422.
        const fingerprint = () => fingerprintOf({ ...target, client: request.client });
        return await deliverOnce(target.account, idempotencyKey, fingerprint, (id, msgId) =>
          deliver(target, id, msgId),
        );
      } catch (err) {
        // Every 401 (missing, malformed, unknown, revoked, expired key) counts against its source.
        if (source !== undefined && isAuthFailure(err)) deps.authFailures?.fail(source);
        throw err;
      }
    },
    dispatchBatch: createBatchDispatch({
      verifier: deps.verifier,
      authFailures: deps.authFailures,
      rateLimiter: deps.rateLimiter,
      store,
      deliver,
      link: deps.link,
      pushLiveBatch:
        config.BATCH_LIVE === 'grouped'
          ? createLiveBatch({
              requester,
              timeoutMs: config.LIVE_TIMEOUT_MS,
              // nats-server refuses a message over its max_payload: larger live batches are split.
              maxMessageBytes: nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD,
              logger,
            })
          : undefined,
      logger,
      limits: {
        ...limits,
        maxEvents: config.BATCH_MAX_EVENTS,
        concurrency: config.BATCH_CONCURRENCY,
      },
      now,
    }),
  };
}

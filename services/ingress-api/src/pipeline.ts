import type { KeyVerifier } from '@herald/access';
import { type AuthFailureLimiter, isAuthFailure, type Logger, type NatsLink } from '@herald/kit';
import { NatsRequester, TurnPublisher } from '@herald/nats';
import { subjects } from '@herald/proto';
import type { QueuedRecipients, QueueLayout, RecipientDepth } from '@herald/queue';
import {
  createStatusAcks,
  InboxClient,
  type StatusAcks,
  StatusBatcher,
} from '@herald/status-client';
import type { JetStreamClient, NatsConnection } from 'nats';
import type { Registry } from 'prom-client';
import { type Authorise, type Caller, createAuthorise } from './authorise.js';
import { dispatchCeilingMs, type IngressConfig } from './config.js';
import { createDeliver, type Deliver } from './deliver.js';
import { IdempotencyStore } from './idempotency.js';
import { createInboxKeeper, type InboxKeeper } from './inbox-keep.js';
import type { IngressMetrics } from './metrics.js';
import { refuseWhileDown } from './nats-outage.js';
import type { DispatchRateLimiter } from './rate-limiter.js';
import { createBadRequestAttribution } from './refusals/bad-request.js';
import { refusalLimits } from './refusals/refusal-env.js';
import { RefusalLog } from './refusals/refusal-log.js';
import { withStatusEvents } from './status-events.js';

/** What either front door (a single dispatch, a batch) is given by its transport. */
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

export interface PipelineDeps {
  nc: NatsConnection;
  js: JetStreamClient;
  verifier: KeyVerifier;
  config: IngressConfig;
  /** Which partition stream holds a recipient's queue (QUEUE_PARTITIONS). */
  layout: QueueLayout;
  metrics: IngressMetrics;
  /** Where the status acks' series go (herald_status_messages_*). */
  registry: Registry;
  logger: Logger;
  /** The per-source limit of failed authentications (403 auth_failures); none when absent. */
  authFailures?: AuthFailureLimiter | undefined;
  /** The per-key dispatch rate limit (403 rate_limited); none when absent. */
  rateLimiter?: DispatchRateLimiter | undefined;
  /** The plan's per-recipient queue cap (507 queue_full); only the stream's ceiling when absent. */
  recipientDepth?: RecipientDepth | undefined;
  /** The queue's ceiling on recipients (507 queue_recipients_full); none when absent. */
  queuedRecipients?: QueuedRecipients | undefined;
  /** The NATS connection's state: a dispatch is refused at once while it is down (NATS_OUTAGE_GRACE_MS). */
  link?: NatsLink | undefined;
  /** Epoch ms; injectable for tests. Default Date.now. */
  now?: () => number;
}

/**
 * The steps a dispatch runs, built once per ingress and shared by both front doors: the single
 * dispatch (dispatch.ts) and the batch (batch/). Each door runs them in its own order and
 * granularity: accept → authorise → idempotency → deliver; the transport answers.
 */
export interface Pipeline {
  /** The key's checks (auth, account, client, Origin, recipient), without its rate. */
  authorise: Authorise;
  /**
   * The per-key dispatch rate: one token per event, taken after every check of the request
   * (`takeNow` first: a leased token is spent without a promise; else `take`).
   */
  rateLimiter: Pick<DispatchRateLimiter, 'take' | 'takeNow'> | undefined;
  /** The Idempotency-Key claims, across instances. */
  store: IdempotencyStore;
  /** Step 4: (inbox keys: keep first,) push live, else queue; each outcome also a status record. */
  deliver: Deliver;
  /** Inbox mode: keeps an inbox key's events before they are answered (a batch's at once). */
  inbox: InboxKeeper;
  /**
   * The one turn publisher of the dispatch path: every NATS message of a dispatch (live push,
   * JetStream publish, notice, status record) and the NATS transport's replies leave through it.
   */
  publisher: TurnPublisher;
  /** The dispatch path's requester: its requests leave through the turn publisher. */
  requester: NatsRequester;
  /** Holds the status records' messages until the status stream acks them; stopped at close. */
  statusAcks: StatusAcks;
  /** Refuses a source that sent too many bad keys, before it costs a parse or a lookup. */
  checkSource(source: string | undefined): void;
  /** Counts a failed authentication (any 401) against its source; other errors count nothing. */
  countFailure(source: string | undefined, err: unknown): void;
  /** Refuses at once (503) while NATS has been unreachable past its grace. */
  refuseWhileDown(): void;
  /** A key's refusals, aggregated for the dashboard (issue 45); stopped at close. */
  refusals: RefusalLog;
  /** Attributes a body's 400 to the key the body names, when it verifies (refusals/bad-request.ts). */
  attributeBadRequest(err: unknown, body: Uint8Array): Promise<void>;
  logger: Logger;
  /** Epoch ms. */
  now: () => number;
}

export function createPipeline(deps: PipelineDeps): Pipeline {
  const { nc, config, logger } = deps;
  const now = deps.now ?? Date.now;
  // Every NATS message of the dispatch path (live push, JetStream publish, notice, status record,
  // the NATS transport's reply) leaves at the end of its turn, so a turn's messages share one
  // socket write (turn-publisher.ts).
  const publisher = new TurnPublisher(nc);
  const requester = new NatsRequester(nc, { publisher });
  const { authFailures } = deps;
  const statusAcks = createStatusAcks(
    nc,
    publisher,
    {
      ackTimeoutMs: config.STATUS_ACK_TIMEOUT_MS,
      maxPendingBytes: config.STATUS_PENDING_MAX_BYTES,
      logger,
    },
    deps.registry,
  );
  const inbox = createInboxKeeper(new InboxClient(nc), {
    timeoutMs: config.INBOX_TIMEOUT_MS,
    maxMessageBytes: () => nc.info?.max_payload ?? 1024 * 1024,
  });
  return {
    inbox,
    authorise: createAuthorise({ verifier: deps.verifier, now }),
    rateLimiter: deps.rateLimiter,
    store: new IdempotencyStore(deps.js, {
      staleAfterMs: dispatchCeilingMs(config),
      now,
    }),
    // Every answer of the deliver step is also a status record (never awaited); a turn's records
    // leave as one message per account, through the same turn publisher, each message held until
    // the status stream acks it (statusAcks: published again until then, bounded).
    deliver: withStatusEvents(
      new StatusBatcher(
        publisher,
        {
          maxRecords: config.STATUS_PUBLISH_MAX_RECORDS,
          maxBytes: config.STATUS_PUBLISH_MAX_BYTES,
        },
        statusAcks,
      ),
      createDeliver({
        publisher,
        requester,
        layout: deps.layout,
        recipientDepth: deps.recipientDepth,
        queuedRecipients: deps.queuedRecipients,
        metrics: deps.metrics,
        logger,
        inbox,
        limits: {
          liveTimeoutMs: config.LIVE_TIMEOUT_MS,
          liveProofWaitMs: config.LIVE_PROOF_WAIT_MS,
          publishTimeoutMs: config.PUBLISH_TIMEOUT_MS,
          queueMaxPerRecipient: config.QUEUE_MAX_PER_RECIPIENT,
        },
        now,
      }),
      // A key's payload-carrying record leaves alone; nats-server refuses one over max_payload.
      () => nc.info?.max_payload ?? 1024 * 1024,
    ),
    publisher,
    requester,
    statusAcks,
    checkSource(source) {
      if (source !== undefined) authFailures?.check(source);
    },
    countFailure(source, err) {
      // Every 401 (missing, malformed, unknown, revoked, expired key) counts against its source.
      if (source !== undefined && isAuthFailure(err)) authFailures?.fail(source);
    },
    refuseWhileDown: () => refuseWhileDown(deps.link),
    // Core NATS, one message per key per REFUSAL_FLUSH_MS at most: a lost one is a debugging
    // aid lost, never a delivery's record (proto/refusals.ts).
    refusals: new RefusalLog(
      (batch) => {
        try {
          nc.publish(subjects.refusals(batch.account_id), JSON.stringify(batch));
        } catch (err) {
          logger.warn({ err: String(err) }, "could not publish a key's refusals");
        }
      },
      refusalLimits(config),
      { now, onDrop: () => deps.metrics.refusalsDropped?.inc() },
    ),
    attributeBadRequest: createBadRequestAttribution(deps.verifier, () => {
      try {
        refuseWhileDown(deps.link);
        return false;
      } catch {
        return true;
      }
    }),
    logger,
    now,
  };
}

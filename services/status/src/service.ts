import type http from 'node:http';
import {
  createOpsHandler,
  createRegistry,
  dbReady,
  type Handler,
  natsAnswers,
  type Service,
  type ServiceDeps,
} from '@herald/kit';
import { JsErrCode, jsErrCode } from '@herald/nats';
import type { Resolver } from '@herald/outbound';
import { STATUS_STREAM, statusStreamConfig } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { JetStreamManager, StreamConfig, Subscription } from 'nats';
import type { Registry } from 'prom-client';
import type { StatusConfig } from './config.js';
import type { StatusDb } from './db-schema.js';
import { type InboxResponder, serveInbox } from './inbox/responder.js';
import { createStatusMetrics } from './metrics.js';
import { dueCount } from './push/claim.js';
import { createPush } from './push/wing.js';
import { serveRefusals } from './refusals/subscriber.js';
import { serveStatusRequests } from './responder.js';
import { serveTopicApi } from './topics/responder.js';
import { queueDepth } from './webhooks/claim.js';
import { createWebhooks } from './webhooks/wing.js';
import { ensureWriterConsumer, StatusWriter } from './writer.js';

export interface StatusServiceDeps extends ServiceDeps {
  db: Kysely<StatusDb>;
  registry?: Registry;
  /** Epoch ms; injectable for tests. */
  now?: () => number;
  /** How webhook hosts are resolved (tests inject names); the system resolver by default. */
  resolver?: Resolver;
}

/**
 * The status service as kit's Service: its TLS port serves /healthz and /readyz's status; the ops
 * listener /readyz with its NATS and Postgres checks, and /metrics.
 */
export interface StatusService extends Service {
  registry: Registry;
  /** Ensures the stream and the writer's consumer, then consumes and answers requests. */
  start(): Promise<void>;
  /** Stops answering, lets the batch in hand finish. The caller owns `nc` and `db`. */
  close(): Promise<void>;
}

export function createStatusService(config: StatusConfig, deps: StatusServiceDeps): StatusService {
  const { nc, db, logger } = deps;
  const registry = deps.registry ?? createRegistry('status');
  const metrics = createStatusMetrics(
    registry,
    () => queueDepth(db),
    () => dueCount(db),
  );
  let writer: StatusWriter | undefined;
  let subs: Subscription[] = [];
  let inbox: InboxResponder | undefined;
  let refusals: ReturnType<typeof serveRefusals> | undefined;
  const webhooks = createWebhooks(config, {
    nc,
    db,
    logger,
    metrics: metrics.webhooks,
    now: deps.now ?? Date.now,
    ...(deps.resolver ? { resolver: deps.resolver } : {}),
  });
  const push = createPush(config, {
    nc,
    db,
    logger,
    metrics: metrics.push,
    ...(deps.resolver ? { resolver: deps.resolver } : {}),
  });
  const ready = async () => {
    // A round trip, not the connection's state: a reconnecting client is neither closed nor
    // draining, yet the writer and every status query through it fail.
    const [nats, postgres] = await Promise.all([natsAnswers(nc), dbReady(db as Kysely<unknown>)]);
    return { nats, postgres };
  };
  return {
    // The TLS port says only whether the service is ready; /metrics and the named checks are for
    // operators, on the loopback ops listener.
    handler: notFoundElse(createOpsHandler(registry, ready, { public: true })),
    opsHandler: createOpsHandler(registry, ready),
    registry,
    async start() {
      const jsm = await nc.jetstreamManager();
      await ensureStatusStream(jsm, config);
      await ensureWriterConsumer(jsm, config.STATUS_BATCH_MAX);
      writer = new StatusWriter(
        {
          db,
          js: nc.jetstream(),
          jsm,
          logger,
          metrics,
          webhooksWritten: webhooks.written,
          pushDue: push.due,
        },
        {
          batchMax: config.STATUS_BATCH_MAX,
          batchWaitMs: config.STATUS_BATCH_WAIT_MS,
          orphanRetries: config.STATUS_ORPHAN_RETRIES,
          webhookQueueMax: config.WEBHOOK_ENDPOINT_QUEUE_MAX,
        },
      );
      writer.start();
      subs = serveStatusRequests({
        nc,
        db,
        logger,
        retentionDays: config.STATUS_RETENTION_DAYS,
        now: deps.now ?? Date.now,
      });
      inbox = serveInbox({
        nc,
        db,
        logger,
        cap: config.INBOX_MAX_PER_RECIPIENT,
        batchMax: config.INBOX_BATCH_MAX,
        now: deps.now ?? Date.now,
        webhookQueueMax: config.WEBHOOK_ENDPOINT_QUEUE_MAX,
        webhooksWritten: webhooks.written,
      });
      refusals = serveRefusals({
        nc,
        db,
        logger,
        limits: { perKey: config.REFUSALS_PER_KEY, mergeMs: config.REFUSAL_MERGE_MS },
      });
      subs.push(
        refusals.sub,
        webhooks.start(),
        push.start(),
        serveTopicApi({
          nc,
          db,
          logger,
          caps: {
            topicsPerAccount: config.TOPICS_PER_ACCOUNT_MAX,
            membersPerTopic: config.TOPIC_MEMBERS_MAX,
          },
        }),
      );
      // The server knows the subscriptions once start resolves: a store sent next finds them.
      await nc.flush();
    },
    async close() {
      for (const s of [...subs, ...(inbox?.subs ?? [])]) s.unsubscribe();
      await Promise.all([inbox?.idle(), refusals?.idle()]);
      await Promise.all([writer?.stop(), webhooks.stop(), push.stop()]);
    },
  };
}

/** Creates the status stream, or brings an existing one's limits in line with the config. */
export async function ensureStatusStream(
  jsm: JetStreamManager,
  config: Pick<
    StatusConfig,
    'STATUS_STREAM_MAX_AGE_MS' | 'STATUS_STREAM_MAX_BYTES' | 'NATS_REPLICAS'
  >,
): Promise<void> {
  const wanted = statusStreamConfig({
    maxAgeMs: config.STATUS_STREAM_MAX_AGE_MS,
    maxBytes: config.STATUS_STREAM_MAX_BYTES,
    replicas: config.NATS_REPLICAS,
  }) as unknown as StreamConfig;
  try {
    await jsm.streams.info(STATUS_STREAM);
    await jsm.streams.update(STATUS_STREAM, wanted);
  } catch (err) {
    if (jsErrCode(err) !== JsErrCode.StreamNotFound) throw err;
    await jsm.streams.add(wanted);
  }
}

/** Serves `ops`, and a JSON 404 for every other path (this listener has nothing else). */
function notFoundElse(
  ops: (req: http.IncomingMessage, res: http.ServerResponse) => boolean,
): Handler {
  return (req, res) => {
    if (ops(req, res)) return;
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        error: { code: 'not_found', message: 'the status service serves /healthz and /readyz' },
      }),
    );
  };
}

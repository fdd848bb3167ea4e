import type { Socket } from 'node:net';
import { KeyVerifier, PusherAppVerifier } from '@herald/access';
import {
  AuthFailureLimiter,
  createOpsHandler,
  createRegistry,
  natsAnswers,
  type Service,
  type ServiceDeps,
  watchNatsLink,
} from '@herald/kit';
import { QueuedRecipients, QueueLayout, RecipientDepth } from '@herald/queue';
import { TopicClient } from '@herald/status-client';
import type Koa from 'koa';
import type { JetStreamManager } from 'nats';
import type { Registry } from 'prom-client';
import { createAnswer } from './answer.js';
import { createBatchDispatch } from './batch/batch.js';
import { batchRoute } from './batch/batch-route.js';
import { createLiveBatch } from './batch/live-batch.js';
import { serveNatsBatch } from './batch/nats-batch.js';
import type { IngressConfig } from './config.js';
import { createDispatch, createDispatchVerified } from './dispatch.js';
import { createHttpApp } from './http-app.js';
import { inboxRoutes } from './inbox-routes.js';
import { createIngressMetrics } from './metrics.js';
import { type NatsDispatchServer, serveNatsDispatch } from './nats-dispatch.js';
import { createPipeline } from './pipeline.js';
import { pusherLimitsOf } from './pusher/pusher-env.js';
import { DispatchRateLimiter } from './rate-limiter.js';
import {
  bindRateBucket,
  checkNatsServer,
  ensureJetStreamResources,
  whileJetStreamSilent,
} from './startup.js';
import { statusRoute } from './status-route.js';
import { ensureFanoutStream } from './topics/fanout-stream.js';
import { type FanoutWorkers, startFanoutWorkers } from './topics/fanout-worker.js';
import { createTopicDispatch } from './topics/topic-dispatch.js';

/** nats-server's default max_payload, for a connection whose INFO is not known yet. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

export interface IngressDeps extends ServiceDeps {
  /** Metrics registry; a fresh one labelled `ingress-api` by default. */
  registry?: Registry;
  /** Epoch ms; injectable for tests. */
  now?: () => number;
}

/** The ingress as kit's {@link Service}, plus what tests reach into. */
export interface Ingress extends Service {
  /** The koa app (every route but the plain `POST /notify`, which it serves too when reached). */
  app: Koa;
  registry: Registry;
  /**
   * Checks the NATS server, ensures the queue's streams and the KV buckets, and subscribes to
   * NATS dispatches: what must stand before the port opens.
   */
  start(): Promise<void>;
  /** Drains the dispatch subscriptions; once the requests in flight are answered, the verifier. */
  close(drained?: Promise<void>): Promise<void>;
}

export function createIngress(config: IngressConfig, deps: IngressDeps): Ingress {
  const { nc, logger } = deps;
  const js = nc.jetstream();
  const registry = deps.registry ?? createRegistry('ingress-api');
  const metrics = createIngressMetrics(registry);
  const verifierOptions = {
    ttlMs: config.KEY_CACHE_TTL_MS,
    negativeTtlMs: config.KEY_NEGATIVE_CACHE_TTL_MS,
    timeoutMs: config.AUTH_TIMEOUT_MS,
  };
  const verifier = new KeyVerifier(nc, logger, verifierOptions);
  // The push routes check recipient tokens as /ws/connect does, so they need the signing secrets
  // the dispatch path never holds: a verifier of their own, its cache apart (issue 40).
  const subscriberVerifier = new KeyVerifier(nc, logger, {
    ...verifierOptions,
    withSigningSecrets: true,
  });
  // The Pusher HTTP API's apps (issue 41): looked up by id, cached as keys are.
  const pusherApps = new PusherAppVerifier(nc, logger, {
    ttlMs: config.KEY_CACHE_TTL_MS,
    negativeTtlMs: config.KEY_NEGATIVE_CACHE_TTL_MS,
    timeoutMs: config.AUTH_TIMEOUT_MS,
  });
  // checkAPI off: readiness must report a JetStream outage, not fail to build the manager.
  let manager: Promise<JetStreamManager> | undefined;
  const jsm = () => {
    manager ??= nc.jetstreamManager({ checkAPI: false, timeout: 2000 });
    return manager;
  };
  const authFailures = new AuthFailureLimiter(config, deps.now);
  const layout = new QueueLayout(config.QUEUE_PARTITIONS);
  const link = watchNatsLink(nc, config.NATS_OUTAGE_GRACE_MS);
  const pipeline = createPipeline({
    nc,
    js,
    verifier,
    config,
    layout,
    metrics,
    registry,
    logger,
    authFailures,
    link,
    rateLimiter: new DispatchRateLimiter(bindRateBucket(nc), {
      leaseMs: config.RATE_LEASE_MS,
      leaseBatchMs: config.RATE_LEASE_BATCH_MS,
      logger,
      ...(deps.now ? { now: deps.now } : {}),
    }),
    recipientDepth: new RecipientDepth(jsm, {
      scanCacheMs: config.QUEUE_DEPTH_SCAN_CACHE_MS,
      layout,
      ...(deps.now ? { now: deps.now } : {}),
    }),
    queuedRecipients: new QueuedRecipients(jsm, {
      max: config.QUEUE_MAX_RECIPIENTS,
      cacheMs: config.QUEUE_DEPTH_SCAN_CACHE_MS,
      layout,
      ...(deps.now ? { now: deps.now } : {}),
    }),
    ...(deps.now ? { now: deps.now } : {}),
  });
  // The front doors, on the one pipeline: the single dispatch and the Pusher HTTP API share the
  // steps after authorisation.
  const dispatchVerified = createDispatchVerified(pipeline);
  const topics = new TopicClient(nc, config.TOPIC_TIMEOUT_MS);
  const dispatchTopic = createTopicDispatch({ pipeline, topics, js, config });
  const dispatch = createDispatch(pipeline, config, dispatchVerified, dispatchTopic);
  const maxMessageBytes = nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD;
  const dispatchBatch = createBatchDispatch(pipeline, config, maxMessageBytes);
  // A fan-out chunk's live push, grouped as a batch's (FANOUT_LIVE).
  const { LIVE_TIMEOUT_MS: timeoutMs, LIVE_PROOF_WAIT_MS: proofWaitMs } = config;
  const { requester } = pipeline;
  const fanoutLive = createLiveBatch({
    requester,
    timeoutMs,
    proofWaitMs,
    maxMessageBytes,
    logger,
  });
  const bodyLimitBytes = config.PAYLOAD_LIMIT_BYTES + config.BODY_OVERHEAD_BYTES;
  const ready = async () => {
    const [nats, queue_stream] = await Promise.all([
      // A round trip, not the connection's state: a reconnecting client is neither closed nor
      // draining, yet every dispatch through it fails.
      natsAnswers(nc),
      // Every partition: a missing one refuses a sixteenth of the recipients.
      jsm()
        .then((m) => Promise.all(layout.streams.map((name) => m.streams.info(name))))
        .then(
          () => true,
          () => false,
        ),
    ]);
    return { nats, queue_stream };
  };
  const answer = createAnswer(metrics);
  const { app, listener } = createHttpApp(dispatch, {
    bodyLimitBytes,
    trustedProxyHops: config.TRUSTED_PROXY_HOPS,
    logger,
    answer,
    refusals: pipeline.refusals,
    ops: createOpsHandler(registry, ready, { public: true }),
    eventStatus: statusRoute({
      nc,
      link,
      verifier,
      maxIds: config.STATUS_IDS_MAX,
      timeoutMs: config.STATUS_TIMEOUT_MS,
      // Room for STATUS_IDS_MAX ids of 64 characters, quoted, plus the key.
      bodyLimitBytes: Math.max(config.BODY_OVERHEAD_BYTES, config.STATUS_IDS_MAX * 70 + 1024),
    }),
    notifyBatch: batchRoute(dispatchBatch, {
      bodyLimitBytes: config.BATCH_MAX_BYTES,
      answer,
      trustedProxyHops: config.TRUSTED_PROXY_HOPS,
    }),
    inbox: inboxRoutes({
      nc,
      link,
      verifier,
      timeoutMs: config.INBOX_TIMEOUT_MS,
      now: deps.now ?? Date.now,
    }),
    push: {
      nc,
      link,
      verifier: subscriberVerifier,
      timeoutMs: config.PUSH_TIMEOUT_MS,
      bodyLimitBytes: config.PUSH_SUBSCRIPTION_MAX_BYTES,
      tokenPolicy: {
        maxLifetimeMs: config.TOKEN_MAX_LIFETIME_MS,
        clockSkewMs: config.TOKEN_CLOCK_SKEW_MS,
      },
      trustedProxyHops: config.TRUSTED_PROXY_HOPS,
      checkSource: pipeline.checkSource,
      countFailure: pipeline.countFailure,
      now: deps.now ?? Date.now,
    },
    topics: {
      topics,
      link,
      authorise: pipeline.authorise,
      verifier,
      bodyLimitBytes: config.TOPIC_MEMBERS_MAX_BYTES,
      trustedProxyHops: config.TRUSTED_PROXY_HOPS,
      checkSource: pipeline.checkSource,
      countFailure: pipeline.countFailure,
      refusals: pipeline.refusals,
    },
    pusher: {
      apps: pusherApps,
      pipeline,
      dispatchVerified,
      limits: pusherLimitsOf(config),
      payloadLimitBytes: config.PAYLOAD_LIMIT_BYTES,
      trustedProxyHops: config.TRUSTED_PROXY_HOPS,
      answer,
      metrics,
      logger,
      now: deps.now ?? Date.now,
    },
  });
  let natsDispatch: NatsDispatchServer | undefined;
  let natsBatch: NatsDispatchServer | undefined;
  let fanoutWorkers: FanoutWorkers | undefined;

  return {
    app,
    handler: listener,
    opsHandler: createOpsHandler(registry, ready),
    registry,
    async start() {
      checkNatsServer(nc, config);
      const manager = await jsm();
      await whileJetStreamSilent(
        async () => {
          await ensureJetStreamResources(nc, js, manager, layout, config, logger);
          await ensureFanoutStream(manager, config);
        },
        config.JETSTREAM_START_WAIT_MS,
        logger,
      );
      natsDispatch = serveNatsDispatch(nc, dispatch, {
        bodyLimitBytes,
        logger,
        answer,
        publisher: pipeline.publisher,
      });
      natsBatch = serveNatsBatch(nc, dispatchBatch, {
        bodyLimitBytes: config.BATCH_MAX_BYTES,
        logger,
        answer,
      });
      fanoutWorkers = await startFanoutWorkers({
        js,
        deliver: pipeline.deliver,
        topics,
        pushLiveBatch: config.FANOUT_LIVE === 'grouped' ? fanoutLive : undefined,
        config,
        logger,
        onChunk: (result, copies) => {
          metrics.fanoutChunks.inc({ result });
          if (result === 'acked') metrics.fanoutCopies.inc(copies);
        },
      });
    },
    attach(server) {
      // A refused source's new connections are dropped before TLS and HTTP cost anything (its
      // refusal closed the connection it was told on). Behind proxies the TCP peer is a proxy,
      // so refusals stay per request there.
      if (config.TRUSTED_PROXY_HOPS === 0 && config.AUTH_FAIL_LIMIT > 0) {
        server.on('connection', (socket: Socket) => {
          if (socket.remoteAddress && authFailures.isBlocked(socket.remoteAddress))
            socket.destroy();
        });
      }
    },
    async close(drained) {
      await Promise.all([
        drained,
        natsDispatch?.close(),
        natsBatch?.close(),
        fanoutWorkers?.stop(),
      ]);
      verifier.close();
      subscriberVerifier.close();
      pusherApps.close();
      pipeline.refusals.stop();
      // Every dispatch is answered, so every status record is made: wait for their acks before
      // runService drains the connection (what is left is logged, and lost).
      await pipeline.statusAcks.stop(
        Math.min(config.STATUS_ACK_TIMEOUT_MS, config.SHUTDOWN_TIMEOUT_MS / 4),
      );
    },
  };
}

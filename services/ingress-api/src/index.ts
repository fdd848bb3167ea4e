import type http from 'node:http';
import {
  closeServer,
  createOpsHandler,
  createRegistry,
  createServer,
  ensureKvBucket,
  ensureQueueStream,
  KeyVerifier,
  type Logger,
  listen,
  natsReady,
} from '@herald/kit';
import { QUEUE_STREAM } from '@herald/proto';
import type Koa from 'koa';
import type { JetStreamManager, KV, NatsConnection } from 'nats';
import type { Registry } from 'prom-client';
import { HEADER_HEADROOM_BYTES, type IngressConfig } from './config.js';
import { createDispatcher, type Dispatcher } from './dispatch.js';
import { createHttpApp } from './http-app.js';
import { ensureIdempotencyBucket, IDEMPOTENCY_BUCKET } from './idempotency.js';
import { createIngressMetrics } from './metrics.js';
import { type NatsDispatchServer, serveNatsDispatch } from './nats-dispatch.js';
import { DispatchRateLimiter, RATE_BUCKET } from './rate-limiter.js';
import { RecipientDepth } from './recipient-depth.js';

export { type Env, HEADER_HEADROOM_BYTES, type IngressConfig, loadConfig } from './config.js';
export {
  createDispatcher,
  type Dispatcher,
  type DispatcherDeps,
  type DispatchInput,
} from './dispatch.js';
export { createHttpApp, type HttpAppOptions } from './http-app.js';
export { IDEMPOTENCY_BUCKET } from './idempotency.js';
export { createIngressMetrics, type IngressMetrics } from './metrics.js';
export { type NatsDispatchServer, serveNatsDispatch } from './nats-dispatch.js';
export { DispatchRateLimiter, RATE_BUCKET, type RateLimiterOptions } from './rate-limiter.js';
export { extractMember, findMemberSpan } from './raw-json.js';
export { RecipientDepth, type Room } from './recipient-depth.js';
export type { DispatchResult } from './results.js';

/** How long a dispatch waits for the shared rate state before limiting on this instance alone, ms. */
const RATE_KV_TIMEOUT_MS = 1000;

export interface IngressDeps {
  nc: NatsConnection;
  logger: Logger;
  /** Metrics registry; a fresh one labelled `ingress-api` by default. */
  registry?: Registry;
  /** Epoch ms; injectable for tests. */
  now?: () => number;
}

export interface Ingress {
  /** The koa app (dispatch routes and ops endpoints); `app.callback()` serves it without `start`. */
  app: Koa;
  dispatcher: Dispatcher;
  registry: Registry;
  /**
   * Ensures the queue stream and idempotency bucket, subscribes to NATS dispatches and listens
   * (TLS unless TLS_DISABLED). Resolves with the bound port.
   */
  start(port?: number): Promise<number>;
  /** Stops accepting, lets in-flight requests finish, drains the dispatch subscription. The caller owns `nc`. */
  close(): Promise<void>;
}

export function createIngress(config: IngressConfig, deps: IngressDeps): Ingress {
  const { nc, logger } = deps;
  const js = nc.jetstream();
  const registry = deps.registry ?? createRegistry('ingress-api');
  const metrics = createIngressMetrics(registry);
  const verifier = new KeyVerifier(nc, logger, {
    ttlMs: config.KEY_CACHE_TTL_MS,
    timeoutMs: config.AUTH_TIMEOUT_MS,
  });
  // checkAPI off: readiness must report a JetStream outage, not fail to build the manager.
  let manager: Promise<JetStreamManager> | undefined;
  const jsm = () => {
    manager ??= nc.jetstreamManager({ checkAPI: false, timeout: 2000 });
    return manager;
  };
  // A short timeout: while the shared rate state does not answer, dispatches fall back to a
  // per-instance limit rather than wait.
  const rateJs = nc.jetstream({ timeout: RATE_KV_TIMEOUT_MS });
  let rateKv: Promise<KV> | undefined;
  const rateBucket = () => {
    if (!rateKv) {
      // bindOnly: start() created the bucket; binding costs no round trip per dispatch.
      rateKv = rateJs.views.kv(RATE_BUCKET, { bindOnly: true });
      rateKv.catch(() => {
        rateKv = undefined;
      });
    }
    return rateKv;
  };
  const dispatcher = createDispatcher({
    nc,
    js,
    verifier,
    config,
    metrics,
    logger,
    rateLimiter: new DispatchRateLimiter(rateBucket, {
      leaseMs: config.RATE_LEASE_MS,
      leaseBatchMs: config.RATE_LEASE_BATCH_MS,
      logger,
      ...(deps.now ? { now: deps.now } : {}),
    }),
    recipientDepth: new RecipientDepth(jsm, {
      scanCacheMs: config.QUEUE_DEPTH_SCAN_CACHE_MS,
      ...(deps.now ? { now: deps.now } : {}),
    }),
    ...(deps.now ? { now: deps.now } : {}),
  });
  const bodyLimitBytes = config.PAYLOAD_LIMIT_BYTES + config.BODY_OVERHEAD_BYTES;
  const ready = async () => ({
    nats: natsReady(nc),
    queue_stream: await jsm()
      .then((m) => m.streams.info(QUEUE_STREAM))
      .then(
        () => true,
        () => false,
      ),
  });
  const app = createHttpApp(dispatcher, {
    bodyLimitBytes,
    logger,
    ops: createOpsHandler(registry, ready),
  });
  let server: http.Server | undefined;
  let natsDispatch: NatsDispatchServer | undefined;

  return {
    app,
    dispatcher,
    registry,
    async start(port = config.PORT) {
      checkMaxPayload(nc, config);
      checkByteCapSupported(nc, config);
      const m = await jsm();
      const stream = await ensureQueueStream(m, {
        maxPerRecipient: config.QUEUE_MAX_PER_RECIPIENT,
        maxBytes: config.QUEUE_MAX_BYTES,
        maxMsgSize: config.QUEUE_MAX_MSG_BYTES,
        replicas: config.NATS_REPLICAS,
        // Same window as Idempotency-Key entries, so JetStream's dedup backs them up for as long.
        duplicateWindowMs: config.IDEMPOTENCY_TTL_MS,
        allowShrink: config.QUEUE_SHRINK_LIMITS,
      }).catch((err: unknown) => {
        throw jetStreamError(`the queue stream ${QUEUE_STREAM}`, err);
      });
      if (stream.change !== 'unchanged')
        logger.info({ stream: QUEUE_STREAM, change: stream.change }, 'queue stream ensured');
      if (stream.kept.length > 0)
        logger.warn(
          { stream: QUEUE_STREAM, kept: stream.kept },
          'kept the current queue caps: lowering them would delete stored events over the new cap (set QUEUE_SHRINK_LIMITS=true to apply anyway)',
        );
      await ensureIdempotencyBucket(js, m, {
        ttlMs: config.IDEMPOTENCY_TTL_MS,
        replicas: config.NATS_REPLICAS,
      }).catch((err: unknown) => {
        throw jetStreamError(`the idempotency bucket ${IDEMPOTENCY_BUCKET}`, err);
      });
      await ensureKvBucket(js, m, RATE_BUCKET, {
        ttlMs: config.RATE_STATE_TTL_MS,
        replicas: config.NATS_REPLICAS,
      }).catch((err: unknown) => {
        throw jetStreamError(`the rate-limit bucket ${RATE_BUCKET}`, err);
      });
      natsDispatch = serveNatsDispatch(nc, dispatcher, { bodyLimitBytes, logger });
      server = createServer(config, app.callback());
      return listen(server, port, config.HOST);
    },
    async close() {
      await Promise.all([server ? closeServer(server) : undefined, natsDispatch?.close()]);
      verifier.close();
    },
  };
}

/** A payload at the limit plus its headers must fit in one NATS message, or every push of it fails. */
function checkMaxPayload(nc: NatsConnection, config: IngressConfig): void {
  const maxPayload = nc.info?.max_payload;
  const needed = config.PAYLOAD_LIMIT_BYTES + HEADER_HEADROOM_BYTES;
  if (maxPayload !== undefined && maxPayload < needed) {
    throw new Error(
      `NATS max_payload is ${maxPayload} bytes but PAYLOAD_LIMIT_BYTES + ${HEADER_HEADROOM_BYTES} needs ${needed}: lower PAYLOAD_LIMIT_BYTES or raise max_payload in the NATS server config`,
    );
  }
}

function jetStreamError(what: string, err: unknown): Error {
  const reason =
    (err as { code?: string }).code === '503'
      ? 'JetStream is not enabled on this NATS server (no responders)'
      : String(err);
  return new Error(
    `could not create or update ${what}: ${reason}; ingress needs JetStream (nats-server -js)`,
    { cause: err },
  );
}

/**
 * Before nats-server 2.10.5 a file-storage stream with `discard: new` near its byte cap drops
 * its oldest events instead of refusing the publish (nats-server#4771; measured on 2.9.10: 100
 * publishes acked, 71 older events gone). A byte cap there would lose undelivered events.
 */
function checkByteCapSupported(nc: NatsConnection, config: IngressConfig): void {
  if (config.QUEUE_MAX_BYTES === -1) return;
  const version = nc.info?.version ?? '0.0.0';
  const [major = 0, minor = 0, patch = 0] = version.split(/[.-]/).map(Number);
  if (major * 1_000_000 + minor * 1000 + patch < 2_010_005) {
    throw new Error(
      `QUEUE_MAX_BYTES needs nats-server >= 2.10.5 (this one is ${version}): older servers drop the oldest queued events at the byte cap instead of refusing new ones; unset it (-1) or upgrade NATS`,
    );
  }
}

import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { KeyVerifier } from '@herald/access';
import {
  AuthFailureLimiter,
  closeServer,
  createOpsHandler,
  createRegistry,
  createServer,
  type Logger,
  listen,
  type OpsServer,
  startOpsServer,
} from '@herald/kit';
import { NatsRequester, TurnPublisher } from '@herald/nats';
import type { CredentialKind } from '@herald/proto';
import { checkQueueLayout, QueueFloors, QueueLayout, QueueLayoutMismatch } from '@herald/queue';
import { StatusBatcher } from '@herald/status-client';
import type { NatsConnection } from 'nats';
import type { Registry } from 'prom-client';
import { WebSocketServer } from 'ws';
import { socketAdmitter } from './admit/admitter.js';
import { ConnectionCap, poolOf } from './admit/connection-cap.js';
import { ConnectionCounts } from './admit/connection-counts.js';
import type { ConnectionGate } from './admit/connection-gate.js';
import { bindCountsInBackground } from './admit/counts-binding.js';
import { watchRevocations } from './admit/revocation.js';
import { SocketBudget } from './admit/socket-budget.js';
import { createUpgradeHandler } from './admit/upgrade-handler.js';
import type { EdgeConfig } from './config.js';
import { RecipientRegistry } from './connection-registry.js';
import { httpHandler } from './http-fallback.js';
import { serveLiveBatches } from './live-batch.js';
import { createEdgeMetrics } from './metrics.js';
import { queueCheckLimiter } from './queue/check-limiter.js';
import { natsReadiness } from './readiness.js';
import { RecipientSession, type RecipientSessionDeps } from './recipient-session.js';
import { closeSockets } from './socket/closing.js';
import { selectProtocol } from './socket/framing.js';
import { startHeartbeat } from './socket/heartbeat.js';

export interface EdgeDeps {
  /** The edge's NATS connection; the edge drains it in close(). */
  nc: NatsConnection;
  logger: Logger;
  /**
   * Admission beyond authentication (429 / 4429). Default: the per-account concurrent-connection
   * cap across every edge ({@link ConnectionCap} over the `herald_connections` KV bucket).
   */
  gate?: ConnectionGate;
  /** Metrics registry to register on. Default: a fresh one with Node's process metrics. */
  registry?: Registry;
}

export interface Edge {
  /** This process's id in the `herald_connections` bucket (random per process). */
  id: string;
  /**
   * The sockets this edge counts against an account's cap (its Live keys' pool, or its Test key's
   * with kind `test`), across every edge as far as this edge has heard; undefined when a custom gate
   * replaced the cap.
   */
  connectionsSeen(account: string, kind?: CredentialKind): number | undefined;
  /** The TLS listener (plain HTTP when TLS_DISABLED): WebSocket upgrades, /healthz, /readyz's status. */
  server: http.Server;
  /** The ops listener's port (/metrics, /readyz with checks), once started. */
  readonly opsPort: number | undefined;
  /** Listens on `port` (default config.PORT) and resolves with the bound port. */
  start(port?: number): Promise<number>;
  /**
   * Graceful shutdown: refuses new connects, stops every queue drainer and nakks what it held,
   * closes every socket with 1001 so clients reconnect elsewhere, stores the live events they had
   * not proven, drains NATS, closes the server.
   */
  close(): Promise<void>;
}

/** Builds the socket edge without listening. */
export function createEdge(config: EdgeConfig, deps: EdgeDeps): Edge {
  const { nc, logger } = deps;
  const id = randomUUID();
  const counts = deps.gate
    ? undefined
    : new ConnectionCounts({
        edgeId: id,
        ttlMs: config.CONNECTION_COUNT_TTL_MS,
        refreshMs: config.CONNECTION_COUNT_REFRESH_MS,
        aliveIntervalMs: config.EDGE_ALIVE_INTERVAL_MS,
        aliveTimeoutMs: config.EDGE_ALIVE_TIMEOUT_MS,
        logger,
      });
  const gate = deps.gate ?? new ConnectionCap(counts as ConnectionCounts);
  const registry = deps.registry ?? createRegistry('socket-edge');
  const metrics = createEdgeMetrics(registry);
  // Ready only while NATS answers a ping: a socket accepted without it could not be served.
  const ready = natsReadiness(nc);
  let opsServer: OpsServer | undefined;
  const server = createServer(config, httpHandler(registry, ready));
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: config.MAX_CLIENT_FRAME_BYTES,
    handleProtocols: selectProtocol,
    // The registry tracks the sockets (and closes them at shutdown); ws's own tracking would add a
    // Set entry and a close listener per socket for nothing.
    clientTracking: false,
  });
  const verifier = new KeyVerifier(nc, logger, {
    ttlMs: config.KEY_CACHE_TTL_MS,
    negativeTtlMs: config.KEY_NEGATIVE_CACHE_TTL_MS,
    timeoutMs: config.AUTH_TIMEOUT_MS,
  });
  const js = nc.jetstream();
  const jsm = nc.jetstreamManager({ checkAPI: false });
  const requester = new NatsRequester(nc);
  // nats.js's own JetStream API timeout, as the queue lookup's.
  const floors = new QueueFloors(nc, 5000, requester);
  const layout = new QueueLayout(config.QUEUE_PARTITIONS);
  const limitChecks = queueCheckLimiter(config.QUEUE_CHECK_CONCURRENCY, metrics);
  // The edge's one turn publisher: a turn's live replies and its status records (one message per
  // account, the batcher's) leave in one socket write.
  const publisher = new TurnPublisher(nc);
  // What every session shares; each builds its own deps object from it once.
  const sessionDeps: RecipientSessionDeps = {
    nc,
    publisher,
    statusBatcher: new StatusBatcher(publisher),
    js,
    jsm,
    layout,
    options: {
      batch: config.QUEUE_BATCH,
      ackWaitMs: config.ACK_WAIT_MS,
      maxAckPending: config.MAX_ACK_PENDING,
      memoryState: config.QUEUE_CONSUMER_MEMORY,
    },
    recheckMs: config.QUEUE_RECHECK_MS,
    metrics,
    logger,
    limitChecks,
    requester,
    floors,
  };
  const sessions = new RecipientRegistry(
    (account, recipient, previous) =>
      new RecipientSession(sessionDeps, account, recipient, previous),
  );
  const budget = new SocketBudget(config.MAX_SOCKETS);
  let closing = false;
  let closed: Promise<void> | undefined;
  let stopHeartbeat = () => {};
  let liveBatches: { stop(): void } | undefined;
  const countsBinding = counts
    ? bindCountsInBackground(counts, {
        nc,
        jsm,
        logger,
        bucket: { ttlMs: config.CONNECTION_COUNT_TTL_MS, replicas: config.NATS_REPLICAS },
        closing: () => closing,
      })
    : undefined;
  const stopRevocations = watchRevocations(verifier, () => sessions.sockets(), metrics, logger);

  const onAdmitted = socketAdmitter({
    sessions,
    metrics,
    logger,
    proof: {
      maxEvents: config.MAX_UNPROVEN_EVENTS,
      maxBytes: config.MAX_UNPROVEN_BYTES,
      liveProofTimeoutMs: config.LIVE_PROOF_TIMEOUT_MS,
    },
    closing: () => closing,
  });

  server.on(
    'upgrade',
    createUpgradeHandler({
      wss,
      verifier,
      authFailures: new AuthFailureLimiter(config),
      trustedProxyHops: config.TRUSTED_PROXY_HOPS,
      gate,
      budget,
      sessions,
      metrics,
      logger,
      closing: () => closing,
      onAdmitted,
    }),
  );

  return {
    id,
    connectionsSeen: (account, kind = 'live') =>
      counts?.total(poolOf({ account_id: account, kind })),
    server,
    get opsPort() {
      return opsServer?.port;
    },
    async start(port = config.PORT) {
      // An edge with another QUEUE_PARTITIONS than ingress would look for queues in the wrong
      // streams and deliver nothing queued: refuse to start. JetStream being unreachable is no
      // reason not to serve live events; queue checks retry on their own.
      await checkQueueLayout(await jsm, layout).catch((err: unknown) => {
        if (err instanceof QueueLayoutMismatch) throw err;
        logger.warn({ err: String(err) }, 'could not check the queue layout at start');
      });
      // Answering batches before the heartbeat starts: other edges count this one from its first
      // heartbeat, and ingress waits for as many answers as they count.
      liveBatches ??= serveLiveBatches({
        nc,
        edgeId: id,
        sessions,
        // Without the cap's counts (a custom gate) this edge knows of no other: ingress then takes
        // the first answer, and a recipient held elsewhere gets its events from the queue instead.
        edgesAlive: () => counts?.edgesAlive() ?? 1,
        logger,
      });
      await countsBinding?.bind();
      opsServer = await startOpsServer(config, createOpsHandler(registry, ready));
      const bound = await listen(server, port, config.HOST, config.LISTEN_BACKLOG);
      stopHeartbeat();
      stopHeartbeat = startHeartbeat(() => sessions.sockets(), config.HEARTBEAT_INTERVAL_MS);
      return bound;
    },
    close() {
      closed ??= (async () => {
        closing = true;
        const serverClosed = server.listening ? closeServer(server) : Promise.resolve();
        stopHeartbeat();
        stopRevocations();
        // Taken before closeAll forgets them; a connect admitted from now on closes itself (closing).
        const open = [...sessions.sockets()].map((s) => s.ws);
        await sessions.closeAll();
        await closeSockets(open, Math.min(2000, config.SHUTDOWN_TIMEOUT_MS / 4));
        wss.close();
        countsBinding?.stop();
        // Deletes this edge's counts so its sockets stop counting at once, not after the TTL.
        await counts?.close();
        // Answered until the heartbeat is gone (with nothing held once the sessions closed), so
        // ingress never waits for an edge that other edges still count.
        liveBatches?.stop();
        verifier.close();
        await nc
          .drain()
          .catch((err: unknown) => logger.warn({ err: String(err) }, 'NATS drain failed'));
        server.closeAllConnections();
        await Promise.all([serverClosed, opsServer?.close()]);
      })();
      return closed;
    },
  };
}

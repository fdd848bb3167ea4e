import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { KeyVerifier } from '@herald/access';
import {
  AuthFailureLimiter,
  closeServer,
  createOpsHandler,
  createRegistry,
  createServer,
  ensureKvBucket,
  type Handler,
  type Logger,
  listen,
  type OpsServer,
  type ReadinessCheck,
  startOpsServer,
} from '@herald/kit';
import { NatsRequester } from '@herald/nats';
import {
  CloseCodes,
  CONNECT_PATH,
  type CredentialKind,
  HeraldError,
  SUBPROTOCOL,
} from '@herald/proto';
import { checkQueueLayout, QueueFloors, QueueLayout, QueueLayoutMismatch } from '@herald/queue';
import type { JetStreamManager, NatsConnection } from 'nats';
import pLimit from 'p-limit';
import type { Registry } from 'prom-client';
import { WebSocket, WebSocketServer } from 'ws';
import type { EdgeConfig } from './config.js';
import { ConnectionCap, poolOf } from './connection-cap.js';
import { CONNECTIONS_BUCKET, ConnectionCounts } from './connection-counts.js';
import type { ConnectionGate } from './connection-gate.js';
import { RecipientRegistry } from './connection-registry.js';
import { EdgeSocket } from './edge-socket.js';
import { parseAck, selectProtocol } from './framing.js';
import { startHeartbeat } from './heartbeat.js';
import { serveLiveBatches } from './live-batch.js';
import { createEdgeMetrics, type EdgeMetrics } from './metrics.js';
import type { ProofLedgerOptions } from './proof-ledger.js';
import { natsReadiness } from './readiness.js';
import { RecipientSession, type RecipientSessionDeps } from './recipient-session.js';
import { watchRevocations } from './revocation.js';
import { SocketBudget } from './socket-budget.js';
import { type Admission, createUpgradeHandler } from './upgrade-handler.js';

export type { EdgeConfig } from './config.js';
export { loadConfig } from './config.js';

/** Delay between attempts to bind the connection-count bucket while JetStream is unreachable, ms. */
const BIND_RETRY_MS = 2000;

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
  // What every session shares; each builds its own deps object from it once.
  const sessionDeps: RecipientSessionDeps = {
    nc,
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

/**
 * The listener's plain HTTP side: /healthz and /readyz's status, else a JSON error naming the
 * socket endpoint, readable cross-origin. /metrics and the readiness checks are for operators: on the ops listener.
 */
function httpHandler(registry: Registry, ready: ReadinessCheck): Handler {
  const ops = createOpsHandler(registry, ready, { public: true });
  return (req, res) => {
    if (ops(req, res)) return;
    const error =
      (req.url ?? '').split('?')[0] === CONNECT_PATH
        ? new HeraldError(
            'invalid_field',
            `${CONNECT_PATH} takes WebSocket upgrades only: connect with wss://`,
            { field: 'Upgrade' },
          )
        : new HeraldError('not_found', 'No such route: the socket endpoint is /ws/connect');
    res.writeHead(error.status, {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      // The SDK's probe of a socket that failed before opening reads this status from any page
      // (clients/sdk/src/probe.ts): it holds no secret, and no credential is ever sent for it.
      'access-control-allow-origin': '*',
    });
    res.end(JSON.stringify(error.toBody()));
  };
}

/** At most `concurrency` queue checks at once; the waiting ones are a gauge. */
function queueCheckLimiter(concurrency: number, metrics: EdgeMetrics) {
  const checkSlots = pLimit(concurrency);
  return <T>(check: () => Promise<T>): Promise<T> => {
    const result = checkSlots(check);
    metrics.queueChecksWaiting.set(checkSlots.pendingCount);
    return result.finally(() => metrics.queueChecksWaiting.set(checkSlots.pendingCount));
  };
}

/** Binds the counts to their bucket; while JetStream is unreachable, keeps trying in the background. */
function bindCountsInBackground(
  counts: ConnectionCounts,
  deps: {
    nc: NatsConnection;
    jsm: Promise<JetStreamManager>;
    logger: Logger;
    bucket: { ttlMs: number; replicas: number };
    closing: () => boolean;
  },
): { bind(): Promise<void>; stop(): void } {
  let retry: NodeJS.Timeout | undefined;
  let failures = 0;
  const bind = async (): Promise<void> => {
    if (deps.closing()) return;
    try {
      const kv = await ensureKvBucket(
        deps.nc.jetstream(),
        await deps.jsm,
        CONNECTIONS_BUCKET,
        deps.bucket,
      );
      if (!deps.closing()) counts.start(kv);
    } catch (err) {
      // Said once at error level; the retries every BIND_RETRY_MS only at debug.
      deps.logger[failures++ === 0 ? 'error' : 'debug'](
        { err: String(err), bucket: CONNECTIONS_BUCKET },
        'cannot bind the connection-count bucket: the cap counts this edge only until it can',
      );
      retry = setTimeout(() => void bind(), BIND_RETRY_MS);
      retry.unref();
    }
  };
  return { bind, stop: () => clearTimeout(retry) };
}

/** What happens to a socket once the upgrade handler admitted it: count it, wrap it, attach it. */
function socketAdmitter(deps: {
  sessions: RecipientRegistry;
  metrics: EdgeMetrics;
  logger: Logger;
  /** The caps on what a socket holds written and unproven, and the live proof deadline. */
  proof: ProofLedgerOptions;
  closing: () => boolean;
}) {
  const { sessions, metrics, logger } = deps;
  // Listeners shared by every socket where they need nothing of it: each closure made per socket
  // is kept as long as the socket (figure 5 counts them).
  const onError = (err: Error) => logger.debug({ err: err.message }, 'socket error');
  const onSlow = () => metrics.slowConsumerCloses.inc();
  const onClosed = (socket: EdgeSocket) => metrics.openSockets.dec({ framing: socket.framing });
  return ({ ws, framing, params, key, origin, session, hold }: Admission) => {
    metrics.openSockets.inc({ framing });
    ws.on('error', onError);
    const socket = new EdgeSocket({
      ws,
      framing,
      apiKey: params.api_key,
      key,
      recipient: params.recipient,
      client: params.client,
      origin,
      proof: deps.proof,
      hold,
      onClosed,
      onGone: (s) => sessions.detach(session, s),
      onSlow,
    });
    sessions.attach(session, socket);
    if (deps.closing()) {
      socket.close(CloseCodes.goingAway, 'going away');
      return;
    }
    // A plain client's frames are ignored; herald.v1 clients only send acks.
    if (framing === SUBPROTOCOL) {
      ws.on('message', (data, isBinary) => {
        const id = parseAck(data, isBinary);
        if (id === undefined) metrics.malformedClientFrames.inc();
        else socket.acked(id);
      });
    }
  };
}

/** Closes every WebSocket with 1001 (going away), terminating those that do not finish within graceMs. */
async function closeSockets(sockets: WebSocket[], graceMs: number): Promise<void> {
  const done = sockets.map((ws) =>
    ws.readyState === WebSocket.CLOSED
      ? Promise.resolve()
      : new Promise<void>((resolve) => ws.once('close', () => resolve())),
  );
  for (const ws of sockets) {
    if (ws.readyState === WebSocket.OPEN) ws.close(CloseCodes.goingAway, 'going away');
  }
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, graceMs);
  });
  await Promise.race([Promise.all(done), grace]);
  clearTimeout(timer);
  for (const ws of sockets) if (ws.readyState !== WebSocket.CLOSED) ws.terminate();
  await Promise.all(done);
}

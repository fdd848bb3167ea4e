import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import {
  closeServer,
  createOpsHandler,
  createRegistry,
  createServer,
  ensureKvBucket,
  KeyVerifier,
  type Logger,
  listen,
  NatsRequester,
  natsReady,
} from '@herald/kit';
import { CloseCodes, CONNECT_PATH, HeraldError, type KeyKind, SUBPROTOCOL } from '@herald/proto';
import type { NatsConnection } from 'nats';
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
import { createEdgeMetrics } from './metrics.js';
import { RecipientSession } from './recipient-session.js';
import { watchRevocations } from './revocation.js';
import { SocketBudget } from './socket-budget.js';
import { type Admission, createUpgradeHandler } from './upgrade-handler.js';

export type { EdgeConfig } from './config.js';
export { Env, loadConfig } from './config.js';
export { ConnectionCap, poolOf } from './connection-cap.js';
export { CONNECTIONS_BUCKET, ConnectionCounts } from './connection-counts.js';
export { admitAll, type ConnectionGate } from './connection-gate.js';

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
  connectionsSeen(account: string, kind?: KeyKind): number | undefined;
  /** The TLS listener (plain HTTP when TLS_DISABLED): WebSocket upgrades and /healthz, /readyz, /metrics. */
  server: http.Server;
  /** Listens on `port` (default config.PORT) and resolves with the bound port. */
  start(port?: number): Promise<number>;
  /**
   * Graceful shutdown: refuses new connects, stops every queue drainer and nakks what it held,
   * closes every socket with 1001 so clients reconnect elsewhere, drains NATS, closes the server.
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
        logger,
      });
  const gate = deps.gate ?? new ConnectionCap(counts as ConnectionCounts);
  const registry = deps.registry ?? createRegistry('socket-edge');
  const metrics = createEdgeMetrics(registry);
  const ops = createOpsHandler(registry, () => ({ nats: natsReady(nc) }));
  const server = createServer(config, (req, res) => {
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
    });
    res.end(JSON.stringify(error.toBody()));
  });
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: config.MAX_CLIENT_FRAME_BYTES,
    handleProtocols: selectProtocol,
    clientTracking: true,
  });
  const verifier = new KeyVerifier(nc, logger, {
    ttlMs: config.KEY_CACHE_TTL_MS,
    timeoutMs: config.AUTH_TIMEOUT_MS,
  });
  const js = nc.jetstream();
  const jsm = nc.jetstreamManager({ checkAPI: false });
  const requester = new NatsRequester(nc);
  const checkSlots = pLimit(config.QUEUE_CHECK_CONCURRENCY);
  const limitChecks = <T>(check: () => Promise<T>): Promise<T> => {
    const result = checkSlots(check);
    metrics.queueChecksWaiting.set(checkSlots.pendingCount);
    return result.finally(() => metrics.queueChecksWaiting.set(checkSlots.pendingCount));
  };
  const sessions = new RecipientRegistry(
    (account, recipient) =>
      new RecipientSession({
        nc,
        js,
        jsm,
        account,
        recipient,
        options: {
          batch: config.QUEUE_BATCH,
          ackWaitMs: config.ACK_WAIT_MS,
          maxAckPending: config.MAX_ACK_PENDING,
        },
        recheckMs: config.QUEUE_RECHECK_MS,
        metrics,
        logger,
        limitChecks,
        requester,
      }),
  );
  const budget = new SocketBudget(config.MAX_SOCKETS);
  let closing = false;
  let closed: Promise<void> | undefined;
  let stopHeartbeat = () => {};
  let bindRetry: NodeJS.Timeout | undefined;
  let bindFailures = 0;

  /** Binds the counts to their bucket; while JetStream is unreachable, keeps trying in the background. */
  const bindCounts = async (): Promise<void> => {
    if (!counts || closing) return;
    try {
      const kv = await ensureKvBucket(nc.jetstream(), await jsm, CONNECTIONS_BUCKET, {
        ttlMs: config.CONNECTION_COUNT_TTL_MS,
        replicas: config.NATS_REPLICAS,
      });
      if (!closing) counts.start(kv);
    } catch (err) {
      // Said once at error level; the retries every BIND_RETRY_MS only at debug.
      logger[bindFailures++ === 0 ? 'error' : 'debug'](
        { err: String(err), bucket: CONNECTIONS_BUCKET },
        'cannot bind the connection-count bucket: the cap counts this edge only until it can',
      );
      bindRetry = setTimeout(() => void bindCounts(), BIND_RETRY_MS);
      bindRetry.unref();
    }
  };
  const stopRevocations = watchRevocations(verifier, () => sessions.sockets(), metrics, logger);

  const onAdmitted = ({ ws, framing, params, key, origin, session, release }: Admission) => {
    metrics.openSockets.inc({ framing });
    ws.on('error', (err) => logger.debug({ err: err.message }, 'socket error'));
    ws.once('close', () => {
      metrics.openSockets.dec({ framing });
      release();
    });
    const socket = new EdgeSocket({
      ws,
      framing,
      apiKey: params.api_key,
      key,
      recipient: params.recipient,
      client: params.client,
      origin,
      maxBufferedBytes: config.MAX_BUFFERED_BYTES,
      onGone: (s) => sessions.detach(session, s),
      onSlow: () => metrics.slowConsumerCloses.inc(),
    });
    sessions.attach(session, socket);
    if (closing) {
      socket.close(CloseCodes.goingAway, 'going away');
      return;
    }
    // A plain client's frames are ignored; herald.v1 clients only send acks.
    if (framing === SUBPROTOCOL) {
      ws.on('message', (data, isBinary) => {
        const id = parseAck(data, isBinary);
        if (id === undefined) metrics.malformedClientFrames.inc();
        else session.ack(id);
      });
    }
  };

  server.on(
    'upgrade',
    createUpgradeHandler({
      wss,
      verifier,
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
    async start(port = config.PORT) {
      await bindCounts();
      const bound = await listen(server, port, config.HOST);
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
        await sessions.closeAll();
        await closeSockets(wss, Math.min(2000, config.SHUTDOWN_TIMEOUT_MS / 4));
        wss.close();
        clearTimeout(bindRetry);
        // Deletes this edge's counts so its sockets stop counting at once, not after the TTL.
        await counts?.close();
        verifier.close();
        await nc
          .drain()
          .catch((err: unknown) => logger.warn({ err: String(err) }, 'NATS drain failed'));
        server.closeAllConnections();
        await serverClosed;
      })();
      return closed;
    },
  };
}

/** Closes every WebSocket with 1001 (going away), terminating those that do not finish within graceMs. */
async function closeSockets(wss: WebSocketServer, graceMs: number): Promise<void> {
  const sockets = [...wss.clients];
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

import { randomUUID } from 'node:crypto';
import { KeyVerifier } from '@herald/access';
import { AuthFailureLimiter, createRegistry, type Service, type ServiceDeps } from '@herald/kit';
import { NatsRequester, TurnPublisher } from '@herald/nats';
import type { CredentialKind } from '@herald/proto';
import { DevicePositions, INBOX_POSITION_SPACE, QueueFloors, QueueLayout } from '@herald/queue';
import {
  createStatusAcks,
  InboxClient as InboxStoreClient,
  StatusBatcher,
} from '@herald/status-client';
import type { Registry } from 'prom-client';
import { WebSocketServer } from 'ws';
import { socketAdmitter } from './admit/admitter.js';
import { ConnectHold } from './admit/connect-hold.js';
import { ConnectRateLimiter } from './admit/connect-rate.js';
import { ConnectionCap, poolOf } from './admit/connection-cap.js';
import { ConnectionCounts } from './admit/connection-counts.js';
import type { ConnectionGate } from './admit/connection-gate.js';
import { bindCountsInBackground } from './admit/counts-binding.js';
import { watchRevocations } from './admit/revocation.js';
import { SocketBudget } from './admit/socket-budget.js';
import { createUpgradeHandler } from './admit/upgrade-handler.js';
import { type EdgeConfig, queueFrameLimits } from './config.js';
import { feedBuilder } from './feed-builder.js';
import { InboxClient } from './inbox/inbox-client.js';
import { createEdgeMetrics } from './metrics.js';
import { createPusherDoor } from './pusher/pusher-door.js';
import { PUSHER_PATH } from './pusher/pusher-upgrade.js';
import { queueCheckLimiter } from './queue/check-limiter.js';
import type { DrainContext } from './queue/drain-context.js';
import { QueueDrainer } from './queue/queue-drainer.js';
import { natsReadiness } from './readiness.js';
import { edgeService, type Shutdown } from './service.js';
import { RecipientRegistry } from './session/connection-registry.js';
import { RecipientSession } from './session/recipient-session.js';
import type { SessionContext } from './session/session-context.js';
import { selectProtocol } from './socket/framing.js';

/** The NATS connection is the caller's: it drains it after close(). */
export interface EdgeDeps extends ServiceDeps {
  /**
   * Admission beyond authentication (429 / 4429). Default: the per-account concurrent-connection
   * cap across every edge ({@link ConnectionCap} over the `herald_connections` KV bucket).
   */
  gate?: ConnectionGate;
  /** Metrics registry to register on. Default: a fresh one with Node's process metrics. */
  registry?: Registry;
}

/** The socket edge: kit's {@link Service}, and what it counts against the cap. */
export interface Edge extends Service {
  /** This process's id in the `herald_connections` bucket (random per process). */
  id: string;
  /**
   * The sockets this edge counts against an account's cap (its Live keys' pool, or its Test key's
   * with kind `test`), across every edge as far as this edge has heard; undefined when a custom gate
   * replaced the cap.
   */
  connectionsSeen(account: string, kind?: CredentialKind): number | undefined;
}

/**
 * Builds the socket edge without listening: its wings wired together (admission, the recipient
 * sessions with their drains, one open socket's pieces) and handed to {@link edgeService}, which
 * starts and stops them.
 */
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
    // The edge verifies recipient tokens, so it alone asks auth for keys' signing secrets.
    withSigningSecrets: true,
  });
  const tokenPolicy = {
    maxLifetimeMs: config.TOKEN_MAX_LIFETIME_MS,
    clockSkewMs: config.TOKEN_CLOCK_SKEW_MS,
  };
  const jsm = nc.jetstreamManager({ checkAPI: false });
  const requester = new NatsRequester(nc);
  const layout = new QueueLayout(config.QUEUE_PARTITIONS);
  const inboxClient = new InboxClient(new InboxStoreClient(nc), config.INBOX_QUERY_TIMEOUT_MS);
  // The edge's one turn publisher: a turn's live replies and its status records (one message per
  // account, the batcher's) leave in one socket write. Each status message is held until the
  // status stream acks it, published again until then (bounded).
  const publisher = new TurnPublisher(nc);
  const statusAcks = createStatusAcks(
    nc,
    publisher,
    {
      ackTimeoutMs: config.STATUS_ACK_TIMEOUT_MS,
      maxPendingBytes: config.STATUS_PENDING_MAX_BYTES,
      logger,
    },
    registry,
  );
  const status = new StatusBatcher(publisher, undefined, statusAcks);
  // The edge's QUEUE_CHECK_CONCURRENCY slots: drains' queue checks and device feeds' reads.
  const limitChecks = queueCheckLimiter(config.QUEUE_CHECK_CONCURRENCY, metrics);
  const drains: DrainContext = {
    nc,
    js: nc.jetstream(),
    jsm,
    requester,
    layout,
    options: {
      batch: config.QUEUE_BATCH,
      ackWaitMs: config.ACK_WAIT_MS,
      maxAckPending: config.MAX_ACK_PENDING,
      memoryState: config.QUEUE_CONSUMER_MEMORY,
    },
    metrics,
    logger,
    // nats.js's own JetStream API timeout, as the queue lookup's.
    floors: new QueueFloors(nc, 5000, requester),
    status,
    limitChecks,
  };
  const sessionContext: SessionContext = {
    nc,
    publisher,
    recheckMs: config.QUEUE_RECHECK_MS,
    metrics,
    logger,
    drainFor: (recipient, previous) => new QueueDrainer(drains, recipient, previous),
  };
  const sessions = new RecipientRegistry(
    (account, recipient, previous) =>
      new RecipientSession(sessionContext, account, recipient, previous),
  );
  const feedFor = feedBuilder(config, {
    nc,
    jsm,
    layout,
    inbox: inboxClient,
    devicePositions: new DevicePositions(nc, 5000, requester),
    inboxPositions: new DevicePositions(nc, 5000, requester, INBOX_POSITION_SPACE),
    feeds: {
      logger,
      status,
      limitChecks,
      maxHeld: { events: config.MAX_UNPROVEN_EVENTS, bytes: config.MAX_UNPROVEN_BYTES },
      dedupeIds: config.INBOX_DEDUPE_IDS,
    },
  });
  const shutdown: Shutdown = { closing: false };
  const closing = () => shutdown.closing;
  const connectRate = new ConnectRateLimiter({
    perSecond: config.CONNECT_RATE_PER_S,
    burst: config.CONNECT_BURST,
    maxSources: config.CONNECT_RATE_MAX_SOURCES,
  });
  // One budget, connect rate and failed-auth limit for both doors: /ws/connect and /app/{key}.
  const budget = new SocketBudget(config.MAX_SOCKETS);
  const authFailures = new AuthFailureLimiter(config);
  const proof = {
    maxEvents: config.MAX_UNPROVEN_EVENTS,
    maxBytes: config.MAX_UNPROVEN_BYTES,
    liveProofTimeoutMs: config.LIVE_PROOF_TIMEOUT_MS,
  };
  const wsConnect = createUpgradeHandler({
    wss,
    verifier,
    authFailures,
    connectRate,
    trustedProxyHops: config.TRUSTED_PROXY_HOPS,
    gate,
    budget,
    tokenPolicy,
    sessions,
    metrics,
    logger,
    closing,
    onAdmitted: socketAdmitter({
      sessions,
      metrics,
      logger,
      verifier,
      tokenPolicy,
      inbox: {
        client: inboxClient,
        limits: { perSecond: config.INBOX_REQUESTS_PER_S, burst: config.INBOX_REQUEST_BURST },
      },
      proof,
      queueFrames: queueFrameLimits(config, (msg, fields) => logger.warn(fields, msg)),
      closing,
      feedFor,
    }),
  });
  // The Pusher door (src/pusher/): stock pusher-js on /app/{key}, beside /ws/connect.
  const pusher = createPusherDoor({
    nc,
    wss,
    verifier,
    sessions,
    metrics,
    logger,
    proof,
    feedFor: (socket) => feedFor(socket, undefined),
    hold: () => new ConnectHold(budget, gate),
    connectRate,
    authFailures,
    closing,
    config,
  });
  const upgrade: typeof wsConnect = (req, socket, head) => {
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    if (PUSHER_PATH.test(path)) pusher.upgrade(req, socket, head);
    else wsConnect(req, socket, head);
  };
  const service = edgeService(config, {
    id,
    nc,
    jsm,
    layout,
    logger,
    registry,
    // Ready only while NATS answers a ping: a socket accepted without it could not be served.
    ready: natsReadiness(nc),
    verifier,
    sessions,
    counts,
    countsBinding: counts
      ? bindCountsInBackground(counts, {
          nc,
          jsm,
          logger,
          bucket: { ttlMs: config.CONNECTION_COUNT_TTL_MS, replicas: config.NATS_REPLICAS },
          closing,
        })
      : undefined,
    wss,
    upgrade,
    pusher: pusher.sockets,
    // Behind proxies the TCP peer is a proxy: refusals stay per upgrade there.
    dropsEarly: config.TRUSTED_PROXY_HOPS === 0 ? (a) => connectRate.dropsEarly(a) : undefined,
    stopRevocations: watchRevocations(verifier, () => sessions.sockets(), metrics, logger),
    statusAcks,
    shutdown,
  });
  return {
    ...service,
    id,
    connectionsSeen: (account, kind = 'live') =>
      counts?.total(poolOf({ account_id: account, kind })),
  };
}

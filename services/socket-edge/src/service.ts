import type http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { KeyVerifier } from '@herald/access';
import { createOpsHandler, type Logger, type ReadinessCheck, type Service } from '@herald/kit';
import { checkQueueLayout, type QueueLayout, QueueLayoutMismatch } from '@herald/queue';
import type { StatusAcks } from '@herald/status-client';
import type { JetStreamManager, NatsConnection } from 'nats';
import type { Registry } from 'prom-client';
import type { WebSocket, WebSocketServer } from 'ws';
import type { ConnectionCounts } from './admit/connection-counts.js';
import type { bindCountsInBackground } from './admit/counts-binding.js';
import type { EdgeConfig } from './config.js';
import { httpHandler } from './http-fallback.js';
import type { RecipientRegistry } from './session/connection-registry.js';
import { serveLiveBatches } from './session/live-batch.js';
import { closeSockets } from './socket/closing.js';
import { type Heartbeating, startHeartbeat } from './socket/heartbeat.js';

/** Whether the edge is shutting down: read by admission (a new connect is refused with 503 / 4503). */
export interface Shutdown {
  closing: boolean;
}

/** The edge's parts, as createEdge wired them, that its life as a service starts and stops. */
export interface EdgeParts {
  id: string;
  nc: NatsConnection;
  jsm: Promise<JetStreamManager>;
  layout: QueueLayout;
  logger: Logger;
  registry: Registry;
  ready: ReadinessCheck;
  verifier: KeyVerifier;
  sessions: RecipientRegistry;
  /** The cap's counts and their binding to the bucket; absent when a custom gate replaced the cap. */
  counts: ConnectionCounts | undefined;
  countsBinding: ReturnType<typeof bindCountsInBackground> | undefined;
  wss: WebSocketServer;
  /** The `upgrade` listener: admission (admit/upgrade-handler.ts, pusher/pusher-upgrade.ts). */
  upgrade: (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void;
  /**
   * The Pusher door's open sockets (src/pusher/): heartbeated apart, and closed with 4200 at
   * shutdown (`shutdown` sends it and returns their WebSockets to wait on).
   */
  pusher: { sockets(): Iterable<Heartbeating>; shutdown(): WebSocket[] };
  /** True for a client address whose new connections are dropped at accept (connect-rate.ts). */
  dropsEarly: ((address: string) => boolean) | undefined;
  stopRevocations: () => void;
  /** Holds the status records' messages until the status stream acks them. */
  statusAcks: StatusAcks;
  shutdown: Shutdown;
}

/**
 * The socket edge as kit's {@link Service}: its listener serves WebSocket upgrades (and
 * /healthz, /readyz's status), `start` makes what must answer before the port opens, and `close`
 * is the shutdown order that loses nothing.
 */
export function edgeService(config: EdgeConfig, parts: EdgeParts): Service {
  const { nc, logger, sessions, counts, countsBinding, shutdown } = parts;
  let server: http.Server | undefined;
  let stopHeartbeat = () => {};
  let stopPusherHeartbeat = () => {};
  let liveBatches: { stop(): void } | undefined;
  let closed: Promise<void> | undefined;
  return {
    handler: httpHandler(parts.registry, parts.ready),
    opsHandler: createOpsHandler(parts.registry, parts.ready),
    backlog: config.LISTEN_BACKLOG,
    attach(listener) {
      server = listener;
      // An address already told 429 and still over its rate is dropped before TLS costs anything.
      const { dropsEarly } = parts;
      if (dropsEarly) {
        listener.on('connection', (socket: Socket) => {
          if (socket.remoteAddress && dropsEarly(socket.remoteAddress)) socket.destroy();
        });
      }
      listener.on('upgrade', parts.upgrade);
    },
    async start() {
      // An edge with another QUEUE_PARTITIONS than ingress would look for queues in the wrong
      // streams and deliver nothing queued: refuse to start. JetStream being unreachable is no
      // reason not to serve live events; queue checks retry on their own.
      await checkQueueLayout(await parts.jsm, parts.layout).catch((err: unknown) => {
        if (err instanceof QueueLayoutMismatch) throw err;
        logger.warn({ err: String(err) }, 'could not check the queue layout at start');
      });
      // Answering batches before the heartbeat starts: other edges count this one from its first
      // heartbeat, and ingress waits for as many answers as they count.
      liveBatches ??= serveLiveBatches({
        nc,
        edgeId: parts.id,
        sessions,
        // Without the cap's counts (a custom gate) this edge knows of no other: ingress then takes
        // the first answer, and a recipient held elsewhere gets its events from the queue instead.
        edgesAlive: () => counts?.edgesAlive() ?? 1,
        logger,
      });
      await countsBinding?.bind();
      stopHeartbeat();
      stopHeartbeat = startHeartbeat(() => sessions.sockets(), config.HEARTBEAT_INTERVAL_MS);
      stopPusherHeartbeat();
      stopPusherHeartbeat = startHeartbeat(
        () => parts.pusher.sockets(),
        config.HEARTBEAT_INTERVAL_MS,
      );
    },
    /**
     * Graceful shutdown, once the listener refuses new connects: stops every queue drainer and
     * nakks what it held, closes every socket with 1001 so clients reconnect elsewhere (the live
     * events they had not proven are stored by ingress), deletes this edge's counts, then cuts the
     * listener's remaining HTTP connections.
     */
    close(drained) {
      closed ??= (async () => {
        shutdown.closing = true;
        stopHeartbeat();
        stopPusherHeartbeat();
        parts.stopRevocations();
        // Pusher sockets get 4200 (pusher-js reconnects at once), their member sockets with them.
        const pusherOpen = parts.pusher.shutdown();
        // Taken before closeAll forgets them; a connect admitted from now on closes itself (closing).
        const open = [...sessions.sockets()].filter((s) => !s.wire).map((s) => s.ws);
        await sessions.closeAll();
        await closeSockets(
          [...open, ...pusherOpen],
          Math.min(2000, config.SHUTDOWN_TIMEOUT_MS / 4),
        );
        parts.wss.close();
        countsBinding?.stop();
        // Deletes this edge's counts so its sockets stop counting at once, not after the TTL.
        await counts?.close();
        // Answered until the heartbeat is gone (with nothing held once the sessions closed), so
        // ingress never waits for an edge that other edges still count.
        liveBatches?.stop();
        parts.verifier.close();
        server?.closeAllConnections();
        await drained;
        // The sockets' last deliveries are recorded: wait for their acks before runService drains
        // the connection (what is left is logged, and lost).
        await parts.statusAcks.stop(
          Math.min(config.STATUS_ACK_TIMEOUT_MS, config.SHUTDOWN_TIMEOUT_MS / 4),
        );
      })();
      return closed;
    },
  };
}

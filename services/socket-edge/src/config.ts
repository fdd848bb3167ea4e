import {
  AuthFailureEnv,
  CommonEnv,
  envBool,
  envInt,
  envPort,
  opsEnv,
  parseEnv,
  requireTls,
} from '@herald/kit';
import { MAX_EVENTS_PER_FRAME } from '@herald/proto';
import { DEFAULT_QUEUE_PARTITIONS, MAX_QUEUE_PARTITIONS } from '@herald/queue';
import { DEFAULT_STATUS_ACK_OPTIONS } from '@herald/status-client';
import type { z } from 'zod';
import {
  LIST_ACK_BYTES_PER_UUID,
  LIST_ACK_OVERHEAD,
  type QueueFrameLimits,
} from './socket/queue-frame.js';

const MIB = 1024 * 1024;

export const Env = CommonEnv.extend({
  /** Port of the WSS listener (also /healthz, /readyz's status). Default 8444; 0 picks one. */
  PORT: envPort(8444),
  /** The ops listener (/metrics, /readyz with its checks): OPS_HOST (127.0.0.1), OPS_PORT (9444). */
  ...opsEnv(9444),
  /**
   * Listen backlog of the WSS listener: connects the kernel holds completed and not yet accepted.
   * Node's default (511) overflows in a reconnect storm, and the connects past it get connection
   * resets; the kernel caps it at net.core.somaxconn. Default 4096.
   */
  LISTEN_BACKLOG: envInt(4096, 1, 65_535),
  /** Interval between pings; a socket that missed the previous pong is terminated, ms. Default 30000. */
  HEARTBEAT_INTERVAL_MS: envInt(30_000, 100, 600_000),
  /**
   * Bytes of events a socket may hold written and not yet proven received (herald.v1 ack, plain
   * pong) before it is closed as a slow consumer (1013); also bounds the socket's memory. One
   * event larger than it still goes to a socket holding nothing unproven. Default 1048576.
   */
  MAX_UNPROVEN_BYTES: envInt(MIB, 1024, 256 * MIB),
  /** Events a socket may hold written and not yet proven received before it is closed with 1013. Default 1000. */
  MAX_UNPROVEN_EVENTS: envInt(1000, 2, 1_000_000),
  /**
   * How long a live event may wait for a socket's proof of receipt before the edge gives up on it
   * (a batch then answers it 0 and ingress queues it; a single push's ingress has queued it after
   * its own LIVE_TIMEOUT_MS already), ms. Default 5000.
   */
  LIVE_PROOF_TIMEOUT_MS: envInt(5000, 100, 600_000),
  /**
   * Largest frame a client may send (acks, tokens, an inbox key's read and history requests);
   * larger closes the socket with 1009 (RFC 6455: too big). Default 8192: a read of 100 ids of 64
   * characters is about 6.8 KB.
   */
  MAX_CLIENT_FRAME_BYTES: envInt(8192, 128, MIB),
  /** How long the edge waits for the inbox store's answer (unread, read, history, catch-up), ms. Default 2000. */
  INBOX_QUERY_TIMEOUT_MS: envInt(2000, 100, 60_000),
  /** Inbox events a device's catch-up asks the store for per request (inbox keys). Default 100. */
  INBOX_CATCH_UP_BATCH: envInt(100, 1, 1000),
  /**
   * Most stored events a queue device's catch-up reads at once: one batched direct get, written
   * to the socket together (`events` frames of up to QUEUE_FRAME_EVENTS on a `batch=1` socket),
   * its position recorded once the run is proven. A run waits for room on the socket as the drain
   * does, and one read asks for at most MAX_UNPROVEN_BYTES, so it bounds what a feed holds read
   * and unwritten. Default 256.
   */
  DEVICE_CATCH_UP_RUN: envInt(256, 1, 1000),
  /**
   * Event ids an inbox device socket remembers so that a second copy (live and caught up, or
   * queued and caught up) is not written to it again; proven ids beyond it are forgotten, oldest
   * first, so it bounds what each such socket holds. Default 1000.
   */
  INBOX_DEDUPE_IDS: envInt(1000, 10, 1_000_000),
  /**
   * Inbox requests (read, history) one socket may make per second once INBOX_REQUEST_BURST is
   * spent; one at a time in any case. Past it: an in-band `rate_limited` error. Default 5.
   */
  INBOX_REQUESTS_PER_S: envInt(5, 1, 10_000),
  /** Inbox requests one socket may make at once before INBOX_REQUESTS_PER_S applies. Default 10. */
  INBOX_REQUEST_BURST: envInt(10, 1, 10_000),
  /**
   * Streams the offline queue is partitioned into: the same value as ingress-api and retention
   * (the edge refuses to start when the queue's streams say otherwise). Default 16.
   */
  QUEUE_PARTITIONS: envInt(DEFAULT_QUEUE_PARTITIONS, 1, MAX_QUEUE_PARTITIONS),
  /**
   * Queued events one consume() asks JetStream for at a time (topped up by half a batch). What the
   * edge holds per recipient is bounded by MAX_ACK_PENDING whatever this is, and a drain writes only
   * while a socket is at most half its MAX_UNPROVEN_* caps; above MAX_ACK_PENDING it gains nothing.
   * Default 32: fewer pull requests per drained event than a smaller batch.
   */
  QUEUE_BATCH: envInt(32, 1, 256),
  /**
   * Most queued events the edge puts in one herald.v1 `events` frame, to sockets that connected
   * with `batch=1` (one frame, and one list ack back, for the events ready together: never held to
   * fill). 1: never batch. Clamped at start (with a log line) to what a list ack of UUIDs can carry
   * within MAX_CLIENT_FRAME_BYTES, 22 + 39 bytes per id: (MAX_CLIENT_FRAME_BYTES - 22) / 39. Default 64 (= the default
   * MAX_ACK_PENDING: more are never in flight per recipient).
   */
  QUEUE_FRAME_EVENTS: envInt(64, 1, MAX_EVENTS_PER_FRAME),
  /**
   * Most bytes of one `events` frame (batch=1 sockets): events are added while the frame stays
   * within it; a single event larger than it goes alone. Default 65536.
   */
  QUEUE_FRAME_BYTES: envInt(64 * 1024, 1024, 16 * MIB),
  /** Delay after a recipient's first socket opens before the queue is checked once more, ms. Default 500. */
  QUEUE_RECHECK_MS: envInt(500, 1, 60_000),
  /**
   * Queue checks (JetStream API calls: consumer lookup, stream lookup, consumer create) this edge
   * runs at once; the rest wait their turn. Without a bound, thousands of recipients reconnecting
   * together sent thousands of API calls at once and most timed out and retried. Default 32.
   */
  QUEUE_CHECK_CONCURRENCY: envInt(32, 1, 4096),
  /**
   * ack_wait of every recipient's consumer: how soon JetStream redelivers a queued event an edge
   * delivered and neither acked nor nakked, which only happens when that edge died (a live edge
   * keeps its deliveries alive with working() every third of it, and nakks on close), ms. Short, so
   * that after an edge crash a reconnecting recipient gets its in-flight events within 2 s.
   * Default 1000.
   */
  ACK_WAIT_MS: envInt(1000, 500, 3_600_000),
  /** Queued events in flight (sent, not yet acked) per recipient (set on consumers this edge creates). Default 64. */
  MAX_ACK_PENDING: envInt(64, 1, 10_000),
  /**
   * Recipient consumers this edge creates keep their state in nats-server's memory, not in a file
   * it rewrites up to 10 times a second per draining consumer (the largest cost of nats-server in a
   * reconnect storm). Such a consumer is lost when nats-server restarts: the edge creates it again,
   * first deleting the events up to the ack floor it recorded after the recipient's last drain
   * (lib/queue ack-floors.ts), so only what was acked after that record comes again (clients drop
   * repeats by id). `false`: file state, which survives a restart, at that CPU cost. Existing
   * consumers keep the state they were created with. Default true.
   */
  QUEUE_CONSUMER_MEMORY: envBool(true),
  /** How long a key verification is reused, ms (revocations invalidate at once). Default 5000. */
  KEY_CACHE_TTL_MS: envInt(5000, 0, 300_000),
  /** How long auth's refusal of a key is reused, ms, so a retried bad key costs no lookup. Default 5000. */
  KEY_NEGATIVE_CACHE_TTL_MS: envInt(5000, 0, 300_000),
  ...AuthFailureEnv.shape,
  /**
   * The longest a recipient token may live: its exp at most this far after now (and after its
   * iat), ms. Default 24 hours; 1 minute to 7 days.
   */
  TOKEN_MAX_LIFETIME_MS: envInt(24 * 3600_000, 60_000, 7 * 24 * 3600_000),
  /** Clock difference tolerated on a recipient token's exp, nbf and iat, ms. Default 30000; 0 to 5 minutes. */
  TOKEN_CLOCK_SKEW_MS: envInt(30_000, 0, 300_000),
  /** How long to wait for the auth service to verify a key before refusing with 503 / 4503, ms. Default 2000. */
  AUTH_TIMEOUT_MS: envInt(2000, 100, 60_000),
  /**
   * WebSocket upgrade attempts (any: good, bad key, bad token) one client address may make per
   * second, after a burst of CONNECT_BURST; past it 429 `too_many_connects` with Retry-After
   * (herald.v1: close 4429), before any key lookup. The address is the TCP peer, or the
   * TRUSTED_PROXY_HOPS-th from the right of X-Forwarded-For (behind a proxy, set it: else every
   * client shares the proxy's address). 0 turns the limit off. Default 50.
   */
  CONNECT_RATE_PER_S: envInt(50, 0, 1_000_000),
  /** Upgrade attempts one address may make at once before CONNECT_RATE_PER_S applies. Default 100. */
  CONNECT_BURST: envInt(100, 1, 1_000_000),
  /**
   * Most client addresses the connect rate tracks at once (a bucket each, the limit's memory);
   * past it the one seen longest ago is forgotten. Default 100000.
   */
  CONNECT_RATE_MAX_SOURCES: envInt(100_000, 1, 10_000_000),
  /** Most open sockets this process holds; beyond it a connect gets 503 / 4503. Default 50000. */
  MAX_SOCKETS: envInt(50_000, 1, 10_000_000),
  /**
   * TTL of the per-account connection counts each edge writes to the `herald_connections` KV
   * bucket: a crashed edge's sockets stop counting against the cap within this, ms. Default 30000.
   */
  CONNECTION_COUNT_TTL_MS: envInt(30_000, 1000, 600_000),
  /** How often an edge re-writes its counts (at most half the TTL), ms. Default 10000. */
  CONNECTION_COUNT_REFRESH_MS: envInt(10_000, 100, 300_000),
  /**
   * How often an edge writes its heartbeat to the `herald_connections` bucket, ms. Default 500.
   */
  EDGE_ALIVE_INTERVAL_MS: envInt(500, 100, 60_000),
  /**
   * How long after an edge's last heartbeat its sockets stop counting against the cap on other
   * edges (a crashed edge's accounts can reconnect after this), ms; at least 3 × the interval.
   * Default 1500.
   */
  EDGE_ALIVE_TIMEOUT_MS: envInt(1500, 300, 600_000),
  /** Replicas of the `herald_connections` bucket: 1 on one server, 3 in a cluster. Default 1. */
  NATS_REPLICAS: envInt(1, 1, 5),
  /**
   * How long a status message waits for the status stream's acknowledgement before it is
   * published again, ms; each further attempt waits twice as long, up to 8 times this. Also how
   * long shutdown waits for the last ones (at most a quarter of SHUTDOWN_TIMEOUT_MS). Default 2000.
   */
  STATUS_ACK_TIMEOUT_MS: envInt(DEFAULT_STATUS_ACK_OPTIONS.ackTimeoutMs, 100, 60_000),
  /**
   * Most bytes of status messages held unacknowledged (the stream without quorum, NATS
   * unreachable); past it the oldest are dropped, their records lost (counted,
   * herald_status_messages_dropped_total). Default 16 MiB; 64 KiB..1 GiB.
   */
  STATUS_PENDING_MAX_BYTES: envInt(
    DEFAULT_STATUS_ACK_OPTIONS.maxPendingBytes,
    64 * 1024,
    1024 * MIB,
  ),
  /**
   * The Pusher door (`/app/{key}`, src/pusher/): the `activity_timeout` sent in
   * `pusher:connection_established`, seconds. pusher-js pings after that much silence from the
   * edge; a Pusher socket the edge hears nothing from (no frame, no pong) for this plus 30 s is
   * closed with 4201. Default 120; 10..3600.
   */
  PUSHER_ACTIVITY_TIMEOUT_S: envInt(120, 10, 3600),
  /**
   * How long a Pusher socket of a key that requires recipient tokens may stay open without
   * signing in (`pusher:signin`) or subscribing its user channel; then it is closed with 4009.
   * Default 30000; 1000..600000.
   */
  PUSHER_SIGNIN_TIMEOUT_MS: envInt(30_000, 1000, 600_000),
  /** Channels one Pusher socket may be subscribed to at once; past it a subscribe fails. Default 100; 1..10000. */
  PUSHER_MAX_CHANNELS_PER_SOCKET: envInt(100, 1, 10_000),
}).superRefine(
  (env, ctx) => {
    requireTls(env, ctx);
    if (env.CONNECTION_COUNT_REFRESH_MS * 2 > env.CONNECTION_COUNT_TTL_MS) {
      ctx.addIssue({
        code: 'custom',
        path: ['CONNECTION_COUNT_REFRESH_MS'],
        message: `must be at most half of CONNECTION_COUNT_TTL_MS (${env.CONNECTION_COUNT_TTL_MS}), so a live edge's counts never expire between two refreshes`,
      });
    }
    if (env.EDGE_ALIVE_INTERVAL_MS * 3 > env.EDGE_ALIVE_TIMEOUT_MS) {
      ctx.addIssue({
        code: 'custom',
        path: ['EDGE_ALIVE_INTERVAL_MS'],
        message: `must be at most a third of EDGE_ALIVE_TIMEOUT_MS (${env.EDGE_ALIVE_TIMEOUT_MS}), so a live edge is never taken for dead after one late heartbeat`,
      });
    }
  },
  // Run even when a variable is already bad, so one message lists every problem at once.
  { when: () => true },
);
export type Env = z.infer<typeof Env>;

export type EdgeConfig = Env;

/**
 * What one `events` frame may carry: QUEUE_FRAME_EVENTS, lowered (and `onClamp` told why) to the
 * most UUIDs whose list ack fits MAX_CLIENT_FRAME_BYTES, so every ack the edge asks for is one the
 * edge accepts; QUEUE_FRAME_BYTES; and the client frame limit, which the socket checks again per
 * frame against the ids it actually carries.
 */
export function queueFrameLimits(
  config: Pick<Env, 'QUEUE_FRAME_EVENTS' | 'QUEUE_FRAME_BYTES' | 'MAX_CLIENT_FRAME_BYTES'>,
  onClamp: (message: string, fields: Record<string, number>) => void,
): QueueFrameLimits {
  const fit = Math.max(
    1,
    Math.floor((config.MAX_CLIENT_FRAME_BYTES - LIST_ACK_OVERHEAD) / LIST_ACK_BYTES_PER_UUID),
  );
  const events = Math.min(config.QUEUE_FRAME_EVENTS, fit);
  if (events < config.QUEUE_FRAME_EVENTS) {
    onClamp(
      'QUEUE_FRAME_EVENTS lowered: a list ack of that many ids would not fit MAX_CLIENT_FRAME_BYTES (raise it, or lower QUEUE_FRAME_EVENTS)',
      {
        QUEUE_FRAME_EVENTS: config.QUEUE_FRAME_EVENTS,
        MAX_CLIENT_FRAME_BYTES: config.MAX_CLIENT_FRAME_BYTES,
        events,
      },
    );
  }
  return { events, bytes: config.QUEUE_FRAME_BYTES, ackBytes: config.MAX_CLIENT_FRAME_BYTES };
}

/** Reads the edge's configuration; throws one ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): EdgeConfig {
  return parseEnv('socket-edge', Env, env);
}

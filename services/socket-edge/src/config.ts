import { CommonEnv, envInt, envPort, parseEnv, requireTls } from '@herald/kit';
import type { z } from 'zod';

const MIB = 1024 * 1024;

export const Env = CommonEnv.extend({
  /** Port of the WSS listener (also /healthz, /readyz, /metrics). Default 8444; 0 picks one. */
  PORT: envPort(8444),
  /** Interval between pings; a socket that missed the previous pong is terminated, ms. Default 30000. */
  HEARTBEAT_INTERVAL_MS: envInt(30_000, 100, 600_000),
  /** Bytes a socket may have waiting to be sent before it is closed as a slow consumer (1013). Default 1048576. */
  MAX_BUFFERED_BYTES: envInt(MIB, 1024, 256 * MIB),
  /** Largest frame a client may send (they only send acks); larger closes the socket with 1009. Default 4096. */
  MAX_CLIENT_FRAME_BYTES: envInt(4096, 128, MIB),
  /** Messages one consume() asks JetStream for at a time; small because consume() prefetches. Default 8. */
  QUEUE_BATCH: envInt(8, 1, 256),
  /** Delay after a recipient's first socket opens before the queue is checked once more, ms. Default 500. */
  QUEUE_RECHECK_MS: envInt(500, 1, 60_000),
  /**
   * Queue checks (JetStream API calls: consumer lookup, stream lookup, consumer create) this edge
   * runs at once; the rest wait their turn. Without a bound, thousands of recipients reconnecting
   * together sent thousands of API calls at once and most timed out and retried. Default 32.
   */
  QUEUE_CHECK_CONCURRENCY: envInt(32, 1, 4096),
  /** Redelivery delay of a queued event sent but not acked (set on consumers this edge creates), ms. Default 30000. */
  ACK_WAIT_MS: envInt(30_000, 1000, 3_600_000),
  /** Queued events in flight (sent, not yet acked) per recipient (set on consumers this edge creates). Default 64. */
  MAX_ACK_PENDING: envInt(64, 1, 10_000),
  /** How long a key verification is reused, ms (revocations invalidate at once). Default 5000. */
  KEY_CACHE_TTL_MS: envInt(5000, 0, 300_000),
  /** How long to wait for the auth service to verify a key before refusing with 503 / 4503, ms. Default 2000. */
  AUTH_TIMEOUT_MS: envInt(2000, 100, 60_000),
  /** Most open sockets this process holds; beyond it a connect gets 503 / 4503. Default 50000. */
  MAX_SOCKETS: envInt(50_000, 1, 10_000_000),
  /**
   * TTL of the per-account connection counts each edge writes to the `herald_connections` KV
   * bucket: a crashed edge's sockets stop counting against the cap within this, ms. Default 30000.
   */
  CONNECTION_COUNT_TTL_MS: envInt(30_000, 1000, 600_000),
  /** How often an edge re-writes its counts (at most half the TTL), ms. Default 10000. */
  CONNECTION_COUNT_REFRESH_MS: envInt(10_000, 100, 300_000),
  /** Replicas of the `herald_connections` bucket: 1 on one server, 3 in a cluster. Default 1. */
  NATS_REPLICAS: envInt(1, 1, 5),
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
  },
  // Run even when a variable is already bad, so one message lists every problem at once.
  { when: () => true },
);
export type Env = z.infer<typeof Env>;

export type EdgeConfig = Env;

/** Reads the edge's configuration; throws one ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): EdgeConfig {
  return parseEnv('socket-edge', Env, env);
}

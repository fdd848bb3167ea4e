import { CommonEnv, envBool, envInt, envPort, opsEnv, parseEnv, requireTls } from '@herald/kit';
import { z } from 'zod';

const DAY_MS = 24 * 3600_000;

export const Env = CommonEnv.extend({
  /** Port of the health listener (/healthz, /readyz's status; TLS). Default 8447; 0 picks one. */
  PORT: envPort(8447),
  /** The ops listener (/metrics, /readyz with its checks): OPS_HOST (127.0.0.1), OPS_PORT (9447). */
  ...opsEnv(9447),
  /** Postgres holding the status tables. Required. */
  DATABASE_URL: z
    .string({ error: 'is required: a Postgres URL such as postgres://user:pass@host:5432/herald' })
    .regex(
      /^postgres(ql)?:\/\/\S+$/,
      'must be a Postgres URL such as postgres://user:pass@host:5432/herald',
    ),
  /** Apply pending migrations before consuming. Default true. */
  MIGRATE_ON_START: envBool(true),
  /** Most Postgres connections this process holds. Default 5. */
  DB_POOL_MAX: envInt(5, 1, 1000),
  /**
   * Most status records written in one transaction. Default 1000. At most 7000: one insert binds
   * 9 parameters per event row, and Postgres refuses a statement with more than 65,535.
   */
  STATUS_BATCH_MAX: envInt(1000, 1, 7_000),
  /**
   * How long the writer waits to fill a batch before writing what it has, ms (a JetStream fetch's
   * expiry, which nats.js takes from 1000 up). Default 1000.
   */
  STATUS_BATCH_WAIT_MS: envInt(1000, 1000, 30_000),
  /** Status rows older than this many days are trimmed when retention asks. Default 30. */
  STATUS_RETENTION_DAYS: envInt(30, 1, 3650),
  /** How long the stream keeps records the writer has not written (writer down), ms. Default 7 days. */
  STATUS_STREAM_MAX_AGE_MS: envInt(7 * DAY_MS, 60_000, 365 * DAY_MS),
  /** Byte cap of the status stream. Default 1 GiB. */
  STATUS_STREAM_MAX_BYTES: envInt(1024 * 1024 * 1024, 1024 * 1024),
  /** Replicas of the status stream: 1 on one server, 3 in a cluster. */
  NATS_REPLICAS: envInt(1, 1, 5),
  /**
   * A `delivered` record whose event the writer has not seen yet (its `pending` record still in
   * flight) is retried this many times, a second apart, before it is written without a key.
   */
  STATUS_ORPHAN_RETRIES: envInt(5, 0, 100),
  /**
   * Inbox mode: most events kept per recipient. Past it a new event takes the place of the
   * recipient's oldest read one; when none is read the event is refused (`inbox_full`, 507).
   */
  INBOX_MAX_PER_RECIPIENT: envInt(10_000, 1, 1_000_000),
  /** Most inbox events kept in one transaction (concurrent stores share it). Default 1000. */
  INBOX_BATCH_MAX: envInt(1000, 1, 10_000),
}).superRefine(requireTls);
export type Env = z.infer<typeof Env>;
export type StatusConfig = Env;

export function loadConfig(env: Record<string, string | undefined> = process.env): StatusConfig {
  return parseEnv('status', Env, env);
}

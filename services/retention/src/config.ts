import { CommonEnv, envInt, envPort, opsEnv, parseEnv, requireTls } from '@herald/kit';
import { DEFAULT_QUEUE_PARTITIONS, MAX_QUEUE_PARTITIONS } from '@herald/queue';
import { Cron } from 'croner';
import { z } from 'zod';

/** Sunday 03:00 UTC: a quiet hour for most audiences. */
export const DEFAULT_SCHEDULE = '0 3 * * 0';

/** A cron expression croner accepts (5 fields, or 6 with seconds); evaluated in UTC. */
const CronExpression = z
  .string()
  .default(DEFAULT_SCHEDULE)
  .superRefine((value, ctx) => {
    try {
      new Cron(value, { timezone: 'UTC', paused: true });
    } catch (err) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a cron expression such as "${DEFAULT_SCHEDULE}" (minute hour day-of-month month day-of-week, UTC): ${(err as Error).message}`,
      });
    }
  });

/** Settings of a retention pass, shared by the service and `run-once`. */
const RunFields = {
  /**
   * Streams the offline queue is partitioned into: the same value as ingress-api and socket-edge
   * (a run over streams created with another value fails without deleting anything). Default 16.
   */
  QUEUE_PARTITIONS: envInt(DEFAULT_QUEUE_PARTITIONS, 1, MAX_QUEUE_PARTITIONS),
  /** Most JetStream API calls per second a run makes (consumer info at scale is expensive). */
  RETENTION_API_RATE: envInt(500, 1, 100_000),
  /** How long one JetStream API call may take, ms. */
  RETENTION_API_TIMEOUT_MS: envInt(5_000, 100, 120_000),
  /** Lifetime of the run lock in NATS KV without a refresh; a dead holder's lock expires after it. */
  RETENTION_LOCK_TTL_MS: envInt(60_000, 1_000, 3_600_000),
  /** Replicas of the run-lock bucket when retention creates it: 1 on one server, 3 in a cluster. */
  NATS_REPLICAS: envInt(1, 1, 5),
} as const;

export const RunOnceEnv = CommonEnv.extend(RunFields);
export type RunOnceEnv = z.infer<typeof RunOnceEnv>;

export const Env = CommonEnv.extend({
  ...RunFields,
  /** Port of the listener (/healthz, /readyz's status). Default 8446; 0 picks one. */
  PORT: envPort(8446),
  /** The ops listener (/metrics, /readyz with its checks): OPS_HOST (127.0.0.1), OPS_PORT (9446). */
  ...opsEnv(9446),
  /** When the weekly run starts: a cron expression in UTC. */
  RETENTION_SCHEDULE: CronExpression,
  /** How often queue depth per account is recomputed between runs, ms; 0 = only after runs. */
  QUEUE_DEPTH_INTERVAL_MS: envInt(300_000, 0, 86_400_000),
}).superRefine(requireTls);
export type Env = z.infer<typeof Env>;

export type RetentionConfig = Env;

/** The service's configuration (listener, schedule and run settings). */
export function loadConfig(env: Record<string, string | undefined> = process.env): RetentionConfig {
  return parseEnv('retention', Env, env);
}

/** What `run-once` needs: no listener, so no TLS files and no schedule. */
export function loadRunOnceConfig(
  env: Record<string, string | undefined> = process.env,
): RunOnceEnv {
  return parseEnv('retention run-once', RunOnceEnv, env);
}

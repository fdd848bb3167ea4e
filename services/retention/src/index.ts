import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  createOpsHandler,
  createRegistry,
  type Handler,
  type Logger,
  natsReady,
} from '@herald/kit';
import type { JetStreamManager, NatsConnection } from 'nats';
import type { Registry } from 'prom-client';
import type { Clock } from './clock.js';
import type { Env, RunOnceEnv } from './config.js';
import { QueueApi } from './jetstream-api.js';
import { createMetrics } from './metrics.js';
import { measureQueueDepth, type QueueDepth } from './queue-depth.js';
import { RateLimiter } from './rate-limiter.js';
import type { SweepHooks } from './recipient-sweep.js';
import { runRetention } from './retention-run.js';
import { RunLock } from './run-lock.js';
import type { RunSummary, RunTrigger } from './run-summary.js';
import { Scheduler } from './scheduler.js';

export { type Clock, systemClock } from './clock.js';
export {
  type Env,
  loadConfig,
  loadRunOnceConfig,
  type RetentionConfig,
  type RunOnceEnv,
} from './config.js';
export type { QueueDepth } from './queue-depth.js';
export type { SweepHooks } from './recipient-sweep.js';
export type { LockRecord } from './run-lock.js';
export type { RunSummary, RunTrigger } from './run-summary.js';

/** Run settings plus, for the long-running service, its schedule and depth interval. */
export type RetentionSettings = RunOnceEnv &
  Partial<Pick<Env, 'RETENTION_SCHEDULE' | 'QUEUE_DEPTH_INTERVAL_MS'>>;

export interface RetentionDeps {
  nc: NatsConnection;
  logger: Logger;
  registry?: Registry;
  /** Drives the schedule; tests inject a fake one. */
  clock?: Clock;
  /** Names this instance in the run lock. Default `<hostname>:<pid>`. */
  instanceId?: string;
  /** Test seams at the sweep's race windows (see recipient-sweep.ts). */
  hooks?: SweepHooks;
}

export interface Retention {
  /** One pass now (under the run lock); resolves with its summary, never rejects. */
  runOnce(trigger?: RunTrigger): Promise<RunSummary>;
  /** Starts the schedule and the periodic queue-depth measurement. Needs RETENTION_SCHEDULE. */
  start(): void;
  /** Recomputes the per-account queue depth gauges (one stream info call). */
  refreshQueueDepth(): Promise<QueueDepth | undefined>;
  /** /healthz, /readyz (NATS), /metrics; 404 for anything else. */
  readonly handler: Handler;
  readonly registry: Registry;
  readonly nextRun: Date | undefined;
  /** Stops the schedule; a run in progress stops at its next safe point (between two events). */
  close(): Promise<void>;
}

/** Builds the retention service without listening or scheduling. */
export function createRetention(config: RetentionSettings, deps: RetentionDeps): Retention {
  const { nc, logger } = deps;
  const registry = deps.registry ?? createRegistry('retention');
  const instanceId = deps.instanceId ?? `${hostname()}:${process.pid}`;
  let scheduler: Scheduler | undefined;
  const metrics = createMetrics(registry, () => scheduler?.nextRun);
  const abort = new AbortController();
  let running: Promise<RunSummary> | undefined;
  let depthTimer: NodeJS.Timeout | undefined;
  let jsm: Promise<JetStreamManager> | undefined;
  let lock: Promise<RunLock> | undefined;

  const manager = () => {
    jsm ??= nc.jetstreamManager({ timeout: config.RETENTION_API_TIMEOUT_MS });
    jsm.catch(() => {
      jsm = undefined;
    });
    return jsm;
  };
  const runLock = () => {
    lock ??= RunLock.open(
      nc.jetstream({ timeout: config.RETENTION_API_TIMEOUT_MS }),
      config.RETENTION_LOCK_TTL_MS,
    );
    lock.catch(() => {
      lock = undefined;
    });
    return lock;
  };

  async function execute(trigger: RunTrigger): Promise<RunSummary> {
    metrics.runStarted();
    let summary: RunSummary;
    try {
      const { summary: s, depth } = await runRetention(
        {
          nc,
          jsm: await manager(),
          lock: await runLock(),
          logger,
          instanceId,
          ...(deps.hooks ? { hooks: deps.hooks } : {}),
        },
        {
          trigger,
          apiRate: config.RETENTION_API_RATE,
          apiTimeoutMs: config.RETENTION_API_TIMEOUT_MS,
          signal: abort.signal,
        },
      );
      summary = s;
      if (depth) metrics.queueDepth(depth);
    } catch (err) {
      // Only setup can land here (JetStream or the lock bucket unreachable): runRetention reports the rest.
      const now = new Date().toISOString();
      summary = {
        run_id: randomUUID(),
        trigger,
        outcome: 'failed',
        reason: err instanceof Error ? err.message : String(err),
        started_at: now,
        finished_at: now,
        duration_ms: 0,
        recipients_scanned: 0,
        events_purged: 0,
        consumers_reaped: 0,
        errors: 0,
        api_calls: 0,
        server_version: nc.info?.version,
      };
    }
    metrics.runFinished(summary);
    const level =
      summary.outcome === 'failed' ? 'error' : summary.outcome === 'completed' ? 'info' : 'warn';
    logger[level](
      { ...summary, next_run: scheduler?.nextRun?.toISOString() },
      'retention run finished',
    );
    return summary;
  }

  const retention: Retention = {
    runOnce(trigger = 'manual') {
      // Runs in this process never overlap; other instances are kept out by the KV lock.
      const current =
        running ??
        execute(trigger).finally(() => {
          running = undefined;
        });
      running = current;
      return current;
    },

    start() {
      if (!config.RETENTION_SCHEDULE) throw new TypeError('start() needs RETENTION_SCHEDULE');
      if (scheduler) return;
      scheduler = new Scheduler(config.RETENTION_SCHEDULE, () => retention.runOnce('schedule'), {
        ...(deps.clock ? { clock: deps.clock } : {}),
        onOverlap: (slot) =>
          logger.warn(
            { slot: slot.toISOString() },
            'scheduled run skipped: the previous run is still going',
          ),
      });
      scheduler.start();
      logger.info(
        { schedule: config.RETENTION_SCHEDULE, next_run: scheduler.nextRun?.toISOString() },
        'retention scheduled',
      );
      const interval = config.QUEUE_DEPTH_INTERVAL_MS ?? 0;
      if (interval > 0) {
        void retention.refreshQueueDepth();
        depthTimer = setInterval(() => void retention.refreshQueueDepth(), interval);
        depthTimer.unref();
      }
    },

    async refreshQueueDepth() {
      try {
        const api = new QueueApi(nc, await manager(), new RateLimiter(config.RETENTION_API_RATE), {
          timeoutMs: config.RETENTION_API_TIMEOUT_MS,
        });
        const depth = await measureQueueDepth(api, Date.now());
        if (depth) metrics.queueDepth(depth);
        return depth;
      } catch (err) {
        logger.warn({ err: String(err) }, 'could not measure queue depth');
        return undefined;
      }
    },

    handler: (() => {
      const ops = createOpsHandler(registry, () => ({ nats: natsReady(nc) }));
      return (req, res) => {
        if (ops(req, res)) return;
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: {
              code: 'not_found',
              message: 'retention serves /healthz, /readyz and /metrics only',
            },
          }),
        );
      };
    })(),

    registry,

    get nextRun() {
      return scheduler?.nextRun;
    },

    async close() {
      clearInterval(depthTimer);
      abort.abort();
      await scheduler?.stop();
      await running;
    },
  };
  return retention;
}

import { hostname } from 'node:os';
import { createRegistry, type Service, type ServiceDeps } from '@herald/kit';
import type { QueueDepth } from '@herald/queue';
import type { Registry } from 'prom-client';
import type { Clock } from './clock.js';
import type { Env, RunOnceEnv } from './config.js';
import { createDepthRefresh } from './depth-refresh.js';
import { jetStreamHandles } from './jetstream-handles.js';
import { createMetrics } from './metrics.js';
import { createRetentionHandler, createRetentionOpsHandler } from './ops-handler.js';
import type { SweepHooks } from './recipient-sweep.js';
import { createRunExecution } from './run-execution.js';
import type { RunSummary, RunTrigger } from './run-summary.js';
import { Scheduler } from './scheduler.js';

/** Run settings plus, for the long-running service, its schedule and depth interval. */
export type RetentionSettings = RunOnceEnv &
  Partial<Pick<Env, 'RETENTION_SCHEDULE' | 'QUEUE_DEPTH_INTERVAL_MS'>>;

export interface RetentionDeps extends ServiceDeps {
  registry?: Registry;
  /** Drives the schedule; tests inject a fake one. */
  clock?: Clock;
  /** Names this instance in the run lock. Default `<hostname>:<pid>`. */
  instanceId?: string;
  /** Test seams at the sweep's race windows (see recipient-sweep.ts). */
  hooks?: SweepHooks;
}

/**
 * Retention as kit's Service (its TLS port: /healthz, /readyz's status, 404 for anything else; the
 * ops listener: /metrics, /readyz with its NATS check), and its runs.
 */
export interface Retention extends Service {
  /** One pass now (under the run lock); resolves with its summary, never rejects. */
  runOnce(trigger?: RunTrigger): Promise<RunSummary>;
  /** Starts the schedule and the periodic queue-depth measurement. Needs RETENTION_SCHEDULE. */
  start(): void;
  /** Recomputes the per-account queue depth gauges (one stream info call). */
  refreshQueueDepth(): Promise<QueueDepth | undefined>;
  readonly registry: Registry;
  readonly nextRun: Date | undefined;
  /** Stops the schedule; a run in progress stops at its next safe point (between two events). */
  close(): Promise<void>;
}

/**
 * Builds the retention service without listening or scheduling. Wires the named pieces: the
 * JetStream handles, one reported run (`run-execution.ts`), the queue-depth refresh, the schedule
 * and the ops handler; each gets only what it reads.
 */
export function createRetention(config: RetentionSettings, deps: RetentionDeps): Retention {
  const { nc, logger } = deps;
  const registry = deps.registry ?? createRegistry('retention');
  let scheduler: Scheduler | undefined;
  const nextRun = () => scheduler?.nextRun;
  const metrics = createMetrics(registry, nextRun);
  const abort = new AbortController();
  let running: Promise<RunSummary> | undefined;
  let depthTimer: NodeJS.Timeout | undefined;
  const settings = {
    apiRate: config.RETENTION_API_RATE,
    apiTimeoutMs: config.RETENTION_API_TIMEOUT_MS,
    partitions: config.QUEUE_PARTITIONS,
  };
  const { manager, runLock } = jetStreamHandles(nc, {
    apiTimeoutMs: config.RETENTION_API_TIMEOUT_MS,
    lockTtlMs: config.RETENTION_LOCK_TTL_MS,
    replicas: config.NATS_REPLICAS,
  });
  const execute = createRunExecution({
    nc,
    logger,
    metrics,
    instanceId: deps.instanceId ?? `${hostname()}:${process.pid}`,
    manager,
    runLock,
    settings,
    signal: abort.signal,
    nextRun,
    hooks: deps.hooks,
  });

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

    refreshQueueDepth: createDepthRefresh({ nc, manager, metrics, logger, settings }),

    opsHandler: createRetentionOpsHandler(nc, registry),

    handler: createRetentionHandler(nc, registry),

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

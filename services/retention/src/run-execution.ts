import { randomUUID } from 'node:crypto';
import type { Logger } from '@herald/kit';
import type { JetStreamManager, NatsConnection } from 'nats';
import type { RetentionMetrics } from './metrics.js';
import type { SweepHooks } from './recipient-sweep.js';
import { runRetention } from './retention-run.js';
import type { RunLock } from './run-lock.js';
import type { RunSummary, RunTrigger } from './run-summary.js';
import { requestInboxExpire, requestStatusTrim } from './status-trim.js';

export interface RunExecutionDeps {
  nc: NatsConnection;
  logger: Logger;
  metrics: Pick<RetentionMetrics, 'runStarted' | 'runFinished' | 'queueDepth'>;
  /** Names this instance in the run lock. */
  instanceId: string;
  manager: () => Promise<JetStreamManager>;
  runLock: () => Promise<RunLock>;
  settings: { apiRate: number; apiTimeoutMs: number; partitions?: number };
  /** Aborted on close: a run stops at its next safe point. */
  signal: AbortSignal;
  /** For the log line: when the schedule runs next, if there is one. */
  nextRun: () => Date | undefined;
  hooks?: SweepHooks | undefined;
}

/**
 * One run, reported: counts it in the metrics, logs its summary at the level its outcome deserves
 * and never rejects (a setup failure becomes a `failed` summary).
 */
export function createRunExecution(deps: RunExecutionDeps) {
  const { nc, logger, metrics } = deps;
  return async function execute(trigger: RunTrigger): Promise<RunSummary> {
    metrics.runStarted();
    let summary: RunSummary;
    try {
      const { summary: s, depth } = await runRetention(
        {
          nc,
          jsm: await deps.manager(),
          lock: await deps.runLock(),
          logger,
          instanceId: deps.instanceId,
          ...(deps.hooks ? { hooks: deps.hooks } : {}),
        },
        {
          trigger,
          apiRate: deps.settings.apiRate,
          apiTimeoutMs: deps.settings.apiTimeoutMs,
          ...(deps.settings.partitions ? { partitions: deps.settings.partitions } : {}),
          signal: deps.signal,
        },
      );
      summary = s;
      if (depth) metrics.queueDepth(depth);
      // The same weekly job trims the status service's old rows; it never fails the run.
      // …and removes expired inbox events (inbox mode), never one not yet delivered.
      if (summary.outcome === 'completed') {
        await requestStatusTrim(nc, logger);
        await requestInboxExpire(nc, logger);
      }
    } catch (err) {
      // Only setup can land here (JetStream or the lock bucket unreachable): runRetention reports the rest.
      summary = setupFailed(trigger, err, nc.info?.version);
    }
    metrics.runFinished(summary);
    const level =
      summary.outcome === 'failed' ? 'error' : summary.outcome === 'completed' ? 'info' : 'warn';
    logger[level](
      { ...summary, next_run: deps.nextRun()?.toISOString() },
      'retention run finished',
    );
    return summary;
  };
}

function setupFailed(
  trigger: RunTrigger,
  err: unknown,
  serverVersion: string | undefined,
): RunSummary {
  const now = new Date().toISOString();
  return {
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
    server_version: serverVersion,
  };
}

import { randomUUID } from 'node:crypto';
import type { Logger } from '@herald/kit';
import { isStreamNotFound } from '@herald/nats';
import { type QueuedNotice, subjects } from '@herald/proto';
import {
  measureQueueDepth,
  QueueApi,
  type QueueDepth,
  QueueFloors,
  QueueLayout,
} from '@herald/queue';
import type { JetStreamManager, NatsConnection } from 'nats';
import { sweepRecordedFloors } from './floor-sweep.js';
import { RateLimiter } from './rate-limiter.js';
import { type SweepContext, type SweepHooks, sweepRecipient } from './recipient-sweep.js';
import type { RunLock } from './run-lock.js';
import type { RunSummary, RunTrigger } from './run-summary.js';

/** After this many consumers fail in a row, the run stops: NATS is likely unavailable. */
const MAX_CONSECUTIVE_ERRORS = 10;

export interface RunDeps {
  nc: NatsConnection;
  jsm: JetStreamManager;
  lock: RunLock;
  logger: Logger;
  /** Identifies this instance in the lock record. */
  instanceId: string;
  hooks?: SweepHooks;
}

export interface RunOptions {
  trigger: RunTrigger;
  apiRate: number;
  apiTimeoutMs: number;
  /** QUEUE_PARTITIONS: the partition streams the run walks. Default 16. */
  partitions?: number;
  /** Aborting stops the run at its next safe point (between two events); the next run continues. */
  signal?: AbortSignal;
}

/**
 * One retention pass over every recipient consumer of every queue partition stream, one partition
 * after the other, under the KV run lock.
 * Pages through consumers (the server's page, 256) instead of loading them all, throttles its
 * JetStream calls, and after the pass measures queue depth per account.
 */
export async function runRetention(
  deps: RunDeps,
  opts: RunOptions,
): Promise<{ summary: RunSummary; depth: QueueDepth | undefined }> {
  const started = Date.now();
  const serverVersion = deps.nc.info?.version;
  const limiter = new RateLimiter(opts.apiRate);
  const layout = new QueueLayout(opts.partitions);
  const apis = layout.streams.map(
    (stream) => new QueueApi(deps.nc, deps.jsm, limiter, { stream, timeoutMs: opts.apiTimeoutMs }),
  );
  const summary: RunSummary = {
    run_id: randomUUID(),
    trigger: opts.trigger,
    outcome: 'completed',
    started_at: new Date(started).toISOString(),
    finished_at: '',
    duration_ms: 0,
    recipients_scanned: 0,
    events_purged: 0,
    consumers_reaped: 0,
    errors: 0,
    api_calls: 0,
    server_version: serverVersion,
  };
  const finish = (depth?: QueueDepth) => {
    const ended = Date.now();
    summary.finished_at = new Date(ended).toISOString();
    summary.duration_ms = ended - started;
    summary.api_calls = apis.reduce((sum, api) => sum + api.calls, 0);
    if (depth) summary.events_stored = depth.messages;
    return { summary, depth };
  };

  const acquired = await deps.lock.acquire({
    holder: deps.instanceId,
    run_id: summary.run_id,
    started_at: summary.started_at,
  });
  if (!acquired.ok) {
    summary.outcome = 'skipped';
    summary.reason = 'another retention instance holds the run lock';
    if (acquired.holder) summary.lock_holder = acquired.holder;
    return finish();
  }
  const lease = acquired.lease;

  const stopReason = () =>
    opts.signal?.aborted
      ? 'shutting down'
      : lease.lost
        ? 'lost the run lock (refresh failed for longer than its TTL)'
        : undefined;
  const base: Omit<SweepContext, 'api'> = {
    stopping: () => stopReason() !== undefined,
    announce: (account, recipient, id) => {
      const notice: QueuedNotice = { v: 1, id };
      deps.nc.publish(subjects.queued(account, recipient), JSON.stringify(notice));
    },
    ...(deps.hooks ? { hooks: deps.hooks } : {}),
  };

  let depth: QueueDepth | undefined;
  try {
    let found = 0;
    let consecutiveErrors = 0;
    partitions: for (const [partition, api] of apis.entries()) {
      const stream = await api.streamInfo();
      if (stream === undefined) continue;
      found++;
      const streamSubjects = stream.config.subjects ?? [];
      const expected = layout.subjectsOf(partition);
      if (
        streamSubjects.length !== expected.length ||
        streamSubjects.some((s, i) => s !== expected[i])
      ) {
        // Recipient consumers and their subjects are only known inside the layout's slots; other
        // subjects mean another QUEUE_PARTITIONS (or a stream Herald did not make).
        throw new Error(
          `stream ${api.stream} captures ${JSON.stringify(streamSubjects)}, not the slots QUEUE_PARTITIONS=${layout.partitions} gives it: refusing to delete from it`,
        );
      }
      const ctx: SweepContext = { ...base, api };
      let offset = 0;
      for (;;) {
        const page = await api.listConsumers(offset);
        if (page.consumers.length === 0) break;
        let removed = 0;
        for (const listed of page.consumers) {
          const reason = stopReason();
          if (reason) {
            summary.outcome = 'aborted';
            summary.reason = reason;
            break partitions;
          }
          try {
            const r = await sweepRecipient(ctx, listed);
            consecutiveErrors = 0;
            if (!r) continue;
            summary.recipients_scanned++;
            summary.events_purged += r.purged;
            if (r.reaped) {
              summary.consumers_reaped++;
              removed++;
            }
          } catch (err) {
            summary.errors++;
            deps.logger.warn(
              { consumer: listed.name, err: String(err) },
              'retention failed for a consumer; the next run retries it',
            );
            if (++consecutiveErrors >= MAX_CONSECUTIVE_ERRORS) {
              throw new Error(
                `${consecutiveErrors} consumers failed in a row; last: ${String(err)}`,
              );
            }
          }
        }
        // The server lists consumers sorted by name: those we deleted shifted the rest down.
        offset += page.consumers.length - removed;
      }
    }
    if (found === 0) {
      summary.reason = 'the queue stream does not exist yet (no partition): nothing to do';
      return finish();
    }
    if (!stopReason()) {
      try {
        summary.events_purged += await sweepRecordedFloors({
          ...base,
          floors: new QueueFloors(deps.nc, opts.apiTimeoutMs),
          layout,
          apis: new Map(apis.map((api) => [api.stream, api])),
          take: () => limiter.take(),
        });
      } catch (err) {
        // No floor bucket yet (ingress makes it with the streams): nothing was recorded.
        if (!isStreamNotFound(err) && !/stream not found/i.test(String(err))) {
          summary.errors++;
          deps.logger.warn(
            { err: String(err) },
            'the recorded floors pass failed; the next run retries it',
          );
        }
      }
    }
    const late = stopReason();
    if (late && summary.outcome === 'completed') {
      // Stopped inside the last recipient: what it did is counted, the rest is the next run's.
      summary.outcome = 'aborted';
      summary.reason = late;
    }
    try {
      depth = await measureQueueDepth(apis, Date.now());
    } catch (err) {
      summary.errors++;
      deps.logger.warn({ err: String(err) }, 'could not measure queue depth after the run');
    }
  } catch (err) {
    summary.outcome = 'failed';
    summary.reason = err instanceof Error ? err.message : String(err);
  } finally {
    await lease.release();
  }
  return finish(depth);
}

import type { LockRecord } from './run-lock.js';

export type RunTrigger = 'schedule' | 'manual';

/**
 * What one run did; `run-once` prints it as JSON and the service logs it as one line.
 * - `completed`: every consumer was visited.
 * - `aborted`: stopped early at a safe point (shutdown, or the lock was lost); the next run resumes.
 * - `skipped`: another instance holds the lock; nothing was done.
 * - `failed`: the run could not proceed (NATS unavailable, repeated errors).
 */
export interface RunSummary {
  run_id: string;
  trigger: RunTrigger;
  outcome: 'completed' | 'aborted' | 'skipped' | 'failed';
  reason?: string;
  started_at: string;
  finished_at: string;
  duration_ms: number;
  /** Recipients whose consumer was examined. */
  recipients_scanned: number;
  /** Delivered (acked) events deleted. */
  events_purged: number;
  /** Drained consumers deleted. */
  consumers_reaped: number;
  /** Consumers that failed (each is retried by the next run). */
  errors: number;
  /** JetStream API calls made (throttled by RETENTION_API_RATE). */
  api_calls: number;
  /** Events stored after the run, all accounts (from the stream's per-subject counts). */
  events_stored?: number;
  server_version: string | undefined;
  /** Who held the lock, when skipped. */
  lock_holder?: LockRecord;
}

import type { QueueDepth } from '@herald/queue';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { RunSummary } from './run-summary.js';

/** Everything retention exposes on /metrics. Gauges are set after runs and depth measurements, never computed on scrape. */
export function createMetrics(registry: Registry, nextRun: () => Date | undefined) {
  const g = (name: string, help: string, labelNames: string[] = []) =>
    new Gauge({ name, help, labelNames, registers: [registry] });
  const c = (name: string, help: string, labelNames: string[] = []) =>
    new Counter({ name, help, labelNames, registers: [registry] });

  const m = {
    runs: c(
      'herald_retention_runs_total',
      'Retention runs by outcome (completed, aborted, skipped, failed).',
      ['outcome'],
    ),
    purged: c('herald_retention_purged_events_total', 'Delivered queued events deleted.'),
    reaped: c('herald_retention_reaped_consumers_total', 'Drained recipient consumers deleted.'),
    errors: c(
      'herald_retention_errors_total',
      'Consumers a run failed to process, plus failed runs.',
    ),
    inProgress: g('herald_retention_run_in_progress', '1 while a run is going.'),
    lastStart: g(
      'herald_retention_last_run_start_timestamp_seconds',
      'Start of the last run that was not skipped.',
    ),
    lastEnd: g(
      'herald_retention_last_run_end_timestamp_seconds',
      'End of the last run that was not skipped.',
    ),
    lastSuccess: g(
      'herald_retention_last_success_timestamp_seconds',
      'End of the last completed run: alert when older than the schedule allows.',
    ),
    lastDuration: g(
      'herald_retention_last_run_duration_seconds',
      'Duration of the last run that was not skipped.',
    ),
    lastPurged: g('herald_retention_last_run_purged_events', 'Events the last run deleted.'),
    lastReaped: g('herald_retention_last_run_reaped_consumers', 'Consumers the last run deleted.'),
    lastScanned: g(
      'herald_retention_last_run_scanned_recipients',
      'Recipients the last run examined.',
    ),
    lastErrors: g('herald_retention_last_run_errors', 'Errors in the last run.'),
    nextRun: new Gauge({
      name: 'herald_retention_next_run_timestamp_seconds',
      help: 'When the next scheduled run starts (0: not scheduled).',
      registers: [registry],
      collect() {
        const next = nextRun();
        this.set(next ? next.getTime() / 1000 : 0);
      },
    }),
    depthEvents: g(
      'herald_queue_depth_events',
      'Events stored per account (undelivered, plus delivered ones awaiting the next run).',
      ['account'],
    ),
    depthRecipients: g(
      'herald_queue_depth_recipients',
      'Recipients with stored events, per account.',
      ['account'],
    ),
    deepest: g(
      'herald_queue_deepest_recipient_events',
      "The account's largest recipient queue: alert as it nears herald_queue_recipient_cap.",
      ['account'],
    ),
    streamMessages: g('herald_queue_stream_messages', 'Events stored in the queue stream.'),
    streamBytes: g('herald_queue_stream_bytes', 'Bytes stored in the queue stream.'),
    streamMaxBytes: g('herald_queue_stream_max_bytes', "The stream's byte cap (-1: none)."),
    streamMaxMessages: g('herald_queue_stream_max_messages', "The stream's event cap (-1: none)."),
    recipientCap: g('herald_queue_recipient_cap', 'The per-recipient cap (max_msgs_per_subject).'),
    consumers: g(
      'herald_queue_consumers',
      'Recipient consumers the server holds (tracks recipients with undelivered events).',
    ),
    depthAt: g(
      'herald_queue_depth_measured_timestamp_seconds',
      'When the queue depth gauges were last computed.',
    ),
  };

  return {
    runStarted(): void {
      m.inProgress.set(1);
    },
    runFinished(s: RunSummary): void {
      m.inProgress.set(0);
      m.runs.inc({ outcome: s.outcome });
      if (s.outcome === 'skipped') return;
      m.purged.inc(s.events_purged);
      m.reaped.inc(s.consumers_reaped);
      m.errors.inc(s.errors + (s.outcome === 'failed' ? 1 : 0));
      const end = Date.parse(s.finished_at) / 1000;
      m.lastStart.set(Date.parse(s.started_at) / 1000);
      m.lastEnd.set(end);
      if (s.outcome === 'completed') m.lastSuccess.set(end);
      m.lastDuration.set(s.duration_ms / 1000);
      m.lastPurged.set(s.events_purged);
      m.lastReaped.set(s.consumers_reaped);
      m.lastScanned.set(s.recipients_scanned);
      m.lastErrors.set(s.errors);
    },
    queueDepth(d: QueueDepth): void {
      // Reset first so an account whose queues emptied disappears instead of keeping its last value.
      m.depthEvents.reset();
      m.depthRecipients.reset();
      m.deepest.reset();
      for (const [account, a] of d.accounts) {
        m.depthEvents.set({ account }, a.events);
        m.depthRecipients.set({ account }, a.recipients);
        m.deepest.set({ account }, a.deepest);
      }
      m.streamMessages.set(d.messages);
      m.streamBytes.set(d.bytes);
      m.streamMaxBytes.set(d.maxBytes);
      m.streamMaxMessages.set(d.maxMessages);
      m.recipientCap.set(d.maxPerRecipient);
      m.consumers.set(d.consumers);
      m.depthAt.set(d.at / 1000);
    },
  };
}

export type RetentionMetrics = ReturnType<typeof createMetrics>;

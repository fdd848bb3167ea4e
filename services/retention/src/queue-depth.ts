import type { QueueApi } from './jetstream-api.js';

export interface AccountDepth {
  /** Events stored for the account's recipients (undelivered, plus delivered ones awaiting a run). */
  events: number;
  /** Recipients with at least one stored event. */
  recipients: number;
  /** The largest single recipient queue: compare with the per-recipient cap. */
  deepest: number;
}

export interface QueueDepth {
  /** When it was measured, epoch ms. */
  at: number;
  messages: number;
  bytes: number;
  consumers: number;
  /** The stream's limits as configured (-1: none). */
  maxPerRecipient: number;
  maxBytes: number;
  maxMessages: number;
  accounts: Map<string, AccountDepth>;
}

/**
 * Queue depth per account from the stream's per-subject counts: one (server-paged) stream info
 * call, whatever the number of consumers, and recipients without a consumer are counted too.
 * Undefined when the stream does not exist yet.
 */
export async function measureQueueDepth(
  api: QueueApi,
  now: number,
): Promise<QueueDepth | undefined> {
  const info = await api.streamInfo(true);
  if (!info) return undefined;
  const accounts = new Map<string, AccountDepth>();
  for (const [subject, count] of Object.entries(info.state.subjects ?? {})) {
    // rt.queue.<account>.<recipient>
    const account = subject.split('.')[2];
    if (account === undefined) continue;
    const depth = accounts.get(account) ?? { events: 0, recipients: 0, deepest: 0 };
    depth.events += count;
    depth.recipients += 1;
    depth.deepest = Math.max(depth.deepest, count);
    accounts.set(account, depth);
  }
  return {
    at: now,
    messages: info.state.messages,
    bytes: info.state.bytes,
    consumers: info.state.consumer_count,
    maxPerRecipient: info.config.max_msgs_per_subject ?? -1,
    maxBytes: info.config.max_bytes ?? -1,
    maxMessages: info.config.max_msgs ?? -1,
    accounts,
  };
}

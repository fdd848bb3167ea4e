import type { QueueApi } from './queue-api.js';

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
 * Queue depth per account from each partition stream's per-subject counts: one (server-paged)
 * stream info call per partition, whatever the number of consumers, and recipients without a
 * consumer are counted too. Totals add the partitions up; the limits are partition 0's (every
 * partition has the same; `maxBytes` is per partition). Undefined when no partition exists yet.
 */
export async function measureQueueDepth(
  apis: readonly QueueApi[],
  now: number,
): Promise<QueueDepth | undefined> {
  let found: QueueDepth | undefined;
  for (const api of apis) {
    const info = await api.streamInfo(true);
    if (!info) continue;
    const depth: QueueDepth = found ?? {
      at: now,
      messages: 0,
      bytes: 0,
      consumers: 0,
      maxPerRecipient: info.config.max_msgs_per_subject ?? -1,
      maxBytes: info.config.max_bytes ?? -1,
      maxMessages: info.config.max_msgs ?? -1,
      accounts: new Map<string, AccountDepth>(),
    };
    found = depth;
    depth.messages += info.state.messages;
    depth.bytes += info.state.bytes;
    depth.consumers += info.state.consumer_count;
    for (const [subject, count] of Object.entries(info.state.subjects ?? {})) {
      // rt.queue.<slot>.<account>.<recipient>
      const account = subject.split('.')[3];
      if (account === undefined) continue;
      const a = depth.accounts.get(account) ?? { events: 0, recipients: 0, deepest: 0 };
      a.events += count;
      a.recipients += 1;
      a.deepest = Math.max(a.deepest, count);
      depth.accounts.set(account, a);
    }
  }
  return found;
}

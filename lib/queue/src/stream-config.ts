/**
 * The offline queue's JetStream stream and per-recipient consumer configuration, as code.
 * Plain objects; the field names and enum strings are JetStream's own,
 * so services pass them straight to nats.js.
 */
import { assertToken, subjects } from '@herald/proto';
import { QueueLayout } from './queue-layout.js';

export interface QueueStreamOptions {
  /** Most events one recipient may have stored; the next is refused (`queue_full`), nothing dropped. Default 100000. */
  maxPerRecipient?: number;
  /** Byte cap of each partition stream (the queue's total is this × the partitions); -1 for none. Default -1. */
  maxBytes?: number;
  /** Largest stored message in bytes. Default 1 MiB. */
  maxMsgSize?: number;
  /** Replicas: 1 on a single server, 3 in a cluster. Default 1. */
  replicas?: number;
  /** Idempotency window for Nats-Msg-Id dedup, milliseconds. Default 120000 (2 min). */
  duplicateWindowMs?: number;
}

const NS_PER_MS = 1_000_000;

/** Partition `partition`'s stream of `layout` (default: the default layout's partition 0). */
export function queueStreamConfig(
  opts: QueueStreamOptions = {},
  layout: QueueLayout = new QueueLayout(),
  partition = 0,
) {
  return {
    name: layout.streams[partition] as string,
    subjects: layout.subjectsOf(partition),
    retention: 'limits',
    storage: 'file',
    // discard new + per-subject: a full recipient queue refuses the publish (JsErrCode.StreamStoreFailed)
    // instead of silently dropping that recipient's oldest event.
    discard: 'new',
    discard_new_per_subject: true,
    max_msgs_per_subject: opts.maxPerRecipient ?? 100_000,
    max_bytes: opts.maxBytes ?? -1,
    max_msg_size: opts.maxMsgSize ?? 1024 * 1024,
    max_age: 0,
    num_replicas: opts.replicas ?? 1,
    duplicate_window: (opts.duplicateWindowMs ?? 120_000) * NS_PER_MS,
    // A device's catch-up reads its recipient's events in runs, one batched DIRECT.GET each
    // (socket-edge's queue-source.ts); without it the stream has no direct get responder.
    allow_direct: true,
  } as const;
}

/** Durable name of a recipient's consumer: stable, so every edge and retention find the same one. */
export function queueConsumerName(account: string, recipient: string): string {
  return `q_${assertToken('account', account)}_${assertToken('recipient', recipient)}`;
}

/** Parses a durable name back into its account and recipient; undefined if not a queue consumer. */
export function parseQueueConsumerName(
  name: string,
): { account: string; recipient: string } | undefined {
  const m = /^q_([0-9a-f-]{36})_([0-9a-f-]{36})$/.exec(name);
  return m?.[1] && m[2] ? { account: m[1], recipient: m[2] } : undefined;
}

export interface QueueConsumerOptions {
  /**
   * Redelivery delay of an unacked event, milliseconds. Default 30000. The socket edge always passes
   * its ACK_WAIT_MS (1 s by default, so an edge crash's in-flight events come back within 2 s) and
   * moves an existing consumer to it; the default serves tools and tests.
   */
  ackWaitMs?: number;
  /** Unacked events in flight per recipient. Default 64. */
  maxAckPending?: number;
  /** Start after this stream sequence (used when re-creating after a reap); default: all. */
  startSeq?: number;
  /**
   * Keep the consumer's state (delivered, ack floor, pending) in nats-server's memory instead of
   * a file beside the stream (JetStream's `mem_storage`). A file-state consumer rewrites its state
   * file (a temporary file, then a rename) up to 10 times a second while deliveries or acks change
   * it: with thousands of recipients draining at once that was nats-server's largest cost
   * (docs/architecture-history.md, "Consumer state in memory: the measurement"). The cost: a
   * memory-state consumer does not survive a nats-server restart; the edge then creates it
   * again and moves it past the recipient's recorded ack floor (ack-floors.ts), so what it had
   * acked after that record is delivered again (at least once still holds; clients drop repeats
   * by id). Default false.
   */
  memoryState?: boolean;
  /**
   * JetStream's ack policy. Default `all` (AckAll): the edge acks the recipient's contiguous
   * proven floor once per turn, one ack for a run of events, never past an unproven one
   * (services/socket-edge queue/ack-floor.ts); a nak or redelivery is still per message. `explicit`
   * is the policy of consumers made before (they keep it: the policy cannot be updated, so an
   * edge uses such a consumer as it is, acking each event, until retention reaps it).
   */
  ackPolicy?: 'all' | 'explicit';
}

/**
 * A recipient's durable pull consumer. No `inactive_threshold`: on servers before 2.12 it reaps
 * a consumer even with unacked messages and loses its ack state, so retention reaps deliberately.
 */
export function queueConsumerConfig(
  account: string,
  recipient: string,
  opts: QueueConsumerOptions = {},
) {
  const start =
    opts.startSeq === undefined
      ? ({ deliver_policy: 'all' } as const)
      : ({ deliver_policy: 'by_start_sequence', opt_start_seq: opts.startSeq } as const);
  return {
    durable_name: queueConsumerName(account, recipient),
    filter_subject: subjects.queue(account, recipient),
    ack_policy: opts.ackPolicy ?? 'all',
    ...start,
    ack_wait: (opts.ackWaitMs ?? 30_000) * NS_PER_MS,
    max_ack_pending: opts.maxAckPending ?? 64,
    max_deliver: -1,
    ...(opts.memoryState ? ({ mem_storage: true } as const) : {}),
  } as const;
}

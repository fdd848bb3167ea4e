/**
 * Migration from the single queue stream of releases before partitioning (`HERALD_QUEUE`,
 * subjects `rt.queue.<account>.<recipient>`) to the partition streams.
 *
 * 1. {@link retireLegacyQueueStream} (ingress start, before the partitions are created): the old
 *    stream's subjects become one nobody publishes to, since `rt.queue.>` overlaps every
 *    partition and the server refuses overlapping streams. Its events and consumers stay.
 * 2. {@link migrateLegacyQueue} (right after): every stored event is re-published to its
 *    recipient's partition with its headers (event id, timestamp) and its `Nats-Msg-Id`, so
 *    JetStream's dedup still recognises a retried dispatch, then deleted from the old stream;
 *    events at or below their recipient's old consumer's ack floor were delivered and are only
 *    deleted. Each move is announced on `rt.queued.*`, so an edge holding the recipient drains it.
 *    When the old stream is empty it is deleted (with its consumers).
 *
 * Crash-safe and idempotent: an event is deleted from the old stream only after its partition
 * acknowledged it, and a second pass (another ingress instance, or a restart) re-publishes with the
 * same `Nats-Msg-Id`, which JetStream drops as a duplicate within the duplicate window; past it, the
 * recipient may get the event twice with the same id (at-least-once, as the SDK expects).
 */

import { isNotFound, isStreamNotFound } from '@herald/nats';
import { EventHeaders, type QueuedNotice, subjects } from '@herald/proto';
import { headers, type JetStreamManager, type JsMsg, type NatsConnection } from 'nats';
import { LEGACY_QUEUE_STREAM, type QueueLayout } from './queue-layout.js';

/** What the retired stream captures: a subject no Herald service publishes to. */
export const RETIRED_QUEUE_SUBJECT = 'rt.retired.queue';

/** Headers JetStream reads at publish and that name the old stream or its sequence: not copied. */
const NOT_COPIED = new Set(['nats-msg-id', 'nats-expected-stream', 'nats-expected-last-sequence']);
const TOKEN = /^[0-9a-f-]{36}$/;

/**
 * Makes the pre-partitioning stream capture nothing Herald publishes. True when it exists
 * (retired now or before): its events are waiting for {@link migrateLegacyQueue}.
 */
export async function retireLegacyQueueStream(jsm: JetStreamManager): Promise<boolean> {
  let info: Awaited<ReturnType<JetStreamManager['streams']['info']>>;
  try {
    info = await jsm.streams.info(LEGACY_QUEUE_STREAM);
  } catch (err) {
    if (isStreamNotFound(err)) return false;
    throw err;
  }
  const current = info.config.subjects ?? [];
  if (current.length !== 1 || current[0] !== RETIRED_QUEUE_SUBJECT) {
    await jsm.streams.update(LEGACY_QUEUE_STREAM, {
      ...info.config,
      subjects: [RETIRED_QUEUE_SUBJECT],
    });
  }
  return true;
}

export interface LegacyMigration {
  /** Undelivered events re-published into their partition and deleted from the old stream. */
  moved: number;
  /** Events at or below their recipient's old ack floor (delivered): deleted, not moved. */
  delivered: number;
  /** Events whose re-publish failed: kept in the old stream for the next start. */
  failed: number;
  /** Messages on subjects that are not a recipient's queue: left where they are. */
  foreign: number;
  /** The old stream was empty at the end and is gone. */
  removed: boolean;
}

export interface MigrateOptions {
  /** Per JetStream call, ms. Default 5000. */
  timeoutMs?: number;
  /** Told about each event kept back (pino's signature; lib/queue does not depend on the kit). */
  logger?: { warn(fields: object, message: string): void };
}

/**
 * Moves what the retired single stream holds into the partition streams (which must exist:
 * ensureQueueStream first). Undefined when there is no old stream.
 */
export async function migrateLegacyQueue(
  nc: NatsConnection,
  layout: QueueLayout,
  opts: MigrateOptions = {},
): Promise<LegacyMigration | undefined> {
  const timeout = opts.timeoutMs ?? 5000;
  const jsm = await nc.jetstreamManager({ timeout });
  const js = nc.jetstream({ timeout });
  let info: Awaited<ReturnType<JetStreamManager['streams']['info']>>;
  try {
    info = await jsm.streams.info(LEGACY_QUEUE_STREAM);
  } catch (err) {
    if (isStreamNotFound(err)) return undefined;
    throw err;
  }
  const result: LegacyMigration = { moved: 0, delivered: 0, failed: 0, foreign: 0, removed: false };
  // What each recipient's old consumer acked up to: delivered, so deleted rather than moved.
  const floors = new Map<string, number>();
  for await (const ci of jsm.consumers.list(LEGACY_QUEUE_STREAM)) {
    const filter = ci.config.filter_subject;
    if (filter) floors.set(filter, Math.max(floors.get(filter) ?? 0, ci.ack_floor.stream_seq));
  }
  if (info.state.messages > 0) {
    // An ordered consumer reads the stream once, in order, without creating anything durable.
    const reader = await js.consumers.get(LEGACY_QUEUE_STREAM);
    const messages = await reader.consume({ max_messages: 256 });
    // Another instance may empty the stream under this one: with nothing left to read, stop
    // after a quiet `timeout` instead of waiting for a message that will never come.
    let quiet = setTimeout(() => messages.stop(), timeout);
    try {
      for await (const m of messages) {
        clearTimeout(quiet);
        await moveOne(m);
        if (m.info.pending === 0) break;
        quiet = setTimeout(() => messages.stop(), timeout);
      }
    } finally {
      clearTimeout(quiet);
      await messages.close().catch(() => undefined);
    }
  }

  async function moveOne(m: JsMsg): Promise<void> {
    const [rt, queue, account, recipient, ...rest] = m.subject.split('.');
    if (
      rt !== 'rt' ||
      queue !== 'queue' ||
      rest.length > 0 ||
      !account ||
      !recipient ||
      !TOKEN.test(account) ||
      !TOKEN.test(recipient)
    ) {
      result.foreign++;
      return;
    }
    if (m.seq <= (floors.get(m.subject) ?? 0)) {
      if (await deleteOld(m.seq)) result.delivered++;
      return;
    }
    const h = headers();
    for (const [key, values] of m.headers ?? []) {
      if (NOT_COPIED.has(key.toLowerCase())) continue;
      for (const value of values) h.append(key, value);
    }
    try {
      await js.publish(subjects.queue(account, recipient), m.data, {
        headers: h,
        msgID: m.headers?.get(EventHeaders.msgId) || `${LEGACY_QUEUE_STREAM}:${m.seq}`,
        expect: { streamName: layout.streamOf(account, recipient) },
      });
    } catch (err) {
      result.failed++;
      opts.logger?.warn(
        { err: String(err), seq: m.seq },
        'could not move a queued event into its partition: kept in the old stream for the next start',
      );
      return;
    }
    await deleteOld(m.seq);
    result.moved++;
    const notice: QueuedNotice = { v: 1, id: m.headers?.get(EventHeaders.id) || `seq:${m.seq}` };
    nc.publish(subjects.queued(account, recipient), JSON.stringify(notice));
  }

  async function deleteOld(seq: number): Promise<boolean> {
    try {
      return await jsm.streams.deleteMessage(LEGACY_QUEUE_STREAM, seq, false);
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  const after = await jsm.streams.info(LEGACY_QUEUE_STREAM).catch(() => undefined);
  if (after && after.state.messages === 0) {
    result.removed = await jsm.streams.delete(LEGACY_QUEUE_STREAM).catch((err: unknown) => {
      if (isStreamNotFound(err)) return true;
      throw err;
    });
  } else if (!after) {
    result.removed = true;
  }
  return result;
}

import { subjects } from '@herald/proto';
import { parseQueueConsumerName, type QueueApi } from '@herald/queue';
import type { ConsumerInfo } from 'nats';

/**
 * Test seams at the sweep's race windows: a test puts an edge's action exactly there, against a
 * real server, to prove what the sweep does about it.
 */
export interface SweepHooks {
  /** After the first consumer check, before anything is deleted. */
  afterCheck?(consumer: string): Promise<void>;
  /** After the last consumer check, right before the consumer is deleted. */
  beforeDelete?(consumer: string): Promise<void>;
}

export interface SweepContext {
  api: QueueApi;
  /** Tells edges that a recipient has queued events but no consumer (rt.queued). */
  announce(account: string, recipient: string, eventId: string): void;
  /** True when the run must stop: checked between events, each of which is a safe stopping point. */
  stopping(): boolean;
  hooks?: SweepHooks;
}

export interface SweepResult {
  account: string;
  recipient: string;
  /** Acked events deleted. */
  purged: number;
  /** The consumer was drained and deleted. */
  reaped: boolean;
}

/** Nothing unacked, and no edge waiting on a pull. */
function idle(ci: ConsumerInfo): boolean {
  return ci.num_ack_pending === 0 && ci.num_waiting === 0;
}

function drained(ci: ConsumerInfo): boolean {
  return ci.num_pending === 0 && idle(ci);
}

/**
 * One recipient's pass: delete the events its consumer has acked, then delete the consumer if
 * nothing is left for it. Each step rests on a consumer info read just before it. Returns
 * undefined for a consumer that is not a Herald recipient queue consumer.
 */
export async function sweepRecipient(
  ctx: SweepContext,
  listed: ConsumerInfo,
): Promise<SweepResult | undefined> {
  const ids = parseQueueConsumerName(listed.name);
  if (!ids) return undefined;
  const subject = subjects.queue(ids.account, ids.recipient);
  if (listed.config.filter_subject !== subject) return undefined;
  const result: SweepResult = { ...ids, purged: 0, reaped: false };
  const { api } = ctx;

  // The common case at scale, an offline recipient that never acked anything: zero calls.
  if (listed.ack_floor.stream_seq === 0 && !drained(listed)) return result;

  const before = await api.consumerInfo(listed.name);
  if (!before) return result;
  await ctx.hooks?.afterCheck?.(listed.name);
  result.purged = await deleteAcked(ctx, subject, before.ack_floor.stream_seq);
  if (ctx.stopping() || !drained(before)) return result;

  const latest = await api.consumerInfo(listed.name);
  // Nothing delivered since `before` (consumer_seq counts every delivery, redeliveries included)
  // and nothing in flight: everything it ever delivered is acked and now deleted, so an edge that
  // re-creates it (DeliverAll) gets only events stored from now on.
  if (
    !latest ||
    latest.delivered.consumer_seq !== before.delivered.consumer_seq ||
    !drained(latest)
  )
    return result;
  await ctx.hooks?.beforeDelete?.(listed.name);
  result.reaped = await api.deleteConsumer(listed.name);
  // An event stored in the last moment has no consumer now: wake any edge holding the recipient.
  const left = await api.firstEvent(subject);
  if (left) ctx.announce(ids.account, ids.recipient, left.id ?? `seq:${left.seq}`);
  return result;
}

/**
 * Deletes, one by one, the subject's events at or below the consumer's ack floor: every one of
 * them was delivered and acked (that is what the floor means), so none is pending anywhere.
 * Event by event rather than one purge. On the pinned server a purge below the ack floor is
 * correct (it keeps ack-pending deliveries; < 2.9.15 forgot them), but a filtered purge still
 * scans the stream span under the stream's lock, many times the cost of one delete (figures in
 * docs/architecture-history.md, "NATS facts on the pinned server", from bench/nats-facts.ts).
 * At retention's API rate, purges would hold the lock most of the time and stall ingress's
 * publishes during the weekly run; deletes interleave with them.
 */
export async function deleteAcked(
  ctx: SweepContext,
  subject: string,
  floor: number,
): Promise<number> {
  let deleted = 0;
  let from = 0;
  while (floor > 0 && !ctx.stopping()) {
    const event = await ctx.api.firstEvent(subject, from);
    if (!event || event.seq > floor) break;
    if (await ctx.api.deleteEvent(event.seq)) deleted++;
    from = event.seq + 1;
  }
  return deleted;
}

import { z } from 'zod';

/**
 * An event crossing NATS (live request or queued message) is the sender's payload JSON text as
 * the message data, untouched, with its metadata in headers. Keeping the payload as bytes means
 * no parse/serialise on the hot path and no loss of precision in large numbers.
 */
export const EventHeaders = {
  /** The event id ingress assigned (UUID v4); herald.v1 clients dedup on it. */
  id: 'Herald-Id',
  /** Milliseconds since the epoch at which ingress accepted the event. */
  ts: 'Herald-Ts',
  /** A topic event's copy (issue 44): the topic's name; the edge puts it on the event frame. */
  topic: 'Herald-Topic',
  /** JetStream's dedup header; Herald sets it to `<account>:<idempotency-key>`. */
  msgId: 'Nats-Msg-Id',
} as const;

export const EventMeta = z.object({
  id: z.string().min(1),
  ts: z.coerce.number().int().nonnegative(),
});
export type EventMeta = z.infer<typeof EventMeta>;

/**
 * The edge's reply to a live request: once a socket proved receipt, how many sockets it was
 * written to; 0 once none of the recipient's sockets on this edge can prove it any more (none took
 * it, each closed or failed it, or its proof went overdue), and the sender queues it.
 */
export const LiveReply = z.object({
  v: z.literal(1),
  /** How many of the recipient's sockets on this edge the event was written to; 0: not sent. */
  sockets: z.number().int().nonnegative(),
});
export type LiveReply = z.infer<typeof LiveReply>;

/** Core-NATS notice published after an event is stored in the queue (see subjects.queued). */
export const QueuedNotice = z.object({ v: z.literal(1), id: z.string() });
export type QueuedNotice = z.infer<typeof QueuedNotice>;

/**
 * A recipient's recorded ack floor (socket-edge, in the queue's floor bucket): the event at
 * stream sequence `seq` of `stream`, whose Herald-Id is `id`, and every earlier event of the
 * recipient there, were acked. Recorded for consumers whose state lives in nats-server's memory,
 * which a nats-server restart loses; the edge that re-creates such a consumer deletes the events
 * up to `seq` first, once the event at `seq` is found with the same subject and id (the proof
 * that the stream is the one the floor was read from), so they are not delivered again.
 */
export const QueueAckFloor = z.object({
  v: z.literal(1),
  stream: z.string().min(1),
  seq: z.number().int().positive(),
  id: z.string().min(1),
});
export type QueueAckFloor = z.infer<typeof QueueAckFloor>;

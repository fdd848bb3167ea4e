import { z } from 'zod';

/**
 * The live part of a batch dispatch, in two messages per batch instead of one live request per
 * event (issue 11: a batch of 100 live events cost 100 requests and 100 replies).
 *
 * 1. **Who holds these recipients?** Ingress sends one {@link LiveHoldersQuery} to
 *    `subjects.liveHolders(account)`, which every edge subscribes to. Each edge answers with a
 *    {@link LiveHoldersReply}: its id, the recipients (by index) it holds an open socket of, and
 *    how many edges it knows to be alive, so ingress knows how many answers to wait for.
 * 2. **Write these events.** To each edge that holds some, ingress sends one {@link LiveBatchMeta}
 *    request on `subjects.edgeLive(edge, account)` with those recipients' events, and the edge
 *    answers {@link LiveBatchReply}: per event, how many sockets the frame was handed to when a
 *    socket proved receipt, else 0.
 *
 * An event no edge confirmed is queued, exactly as a live request that found no responder: so an
 * answer that comes late, an edge ingress did not hear of, or a socket that opens in between
 * costs at most a second copy (same id), never the event.
 */

/** A recipient or edge id as it appears in subjects: a lower-case UUID. */
const Uuid = z.string().regex(/^[0-9a-f-]{36}$/, 'must be a lower-case UUID');

/** Step 1's question: the batch's distinct recipients. */
export const LiveHoldersQuery = z.object({
  v: z.literal(1),
  recipients: z.array(Uuid).min(1),
});
export type LiveHoldersQuery = z.infer<typeof LiveHoldersQuery>;

/** An edge's answer to step 1. */
export const LiveHoldersReply = z.object({
  v: z.literal(1),
  /** The edge's id: where step 2 goes (`subjects.edgeLive`). */
  edge: Uuid,
  /** Edges this edge believes alive, itself included (their heartbeats): answers to wait for. */
  edges: z.number().int().positive(),
  /** Indices into the query's `recipients` of those with an open socket on this edge. */
  held: z.array(z.number().int().nonnegative()),
});
export type LiveHoldersReply = z.infer<typeof LiveHoldersReply>;

/** One event of a step-2 request; its payload is the matching slice of the message's tail. */
export const LiveBatchEvent = z.object({
  recipient: Uuid,
  /** The id ingress assigned (the queued copy, if any, has the same). */
  id: z.string().min(1),
  /** Epoch ms at which ingress accepted the event. */
  ts: z.number().int().nonnegative(),
  /** Byte length of the payload's JSON text in the tail. */
  bytes: z.number().int().nonnegative(),
  /** A topic event's copy (issue 44): its topic, which the frame carries. */
  topic: z.string().min(1).max(128).optional(),
});
export type LiveBatchEvent = z.infer<typeof LiveBatchEvent>;

/**
 * The JSON head of a step-2 request. The message is this head's JSON, a line feed, then every
 * event's payload bytes back to back: payloads cross untouched (never parsed and re-serialised,
 * which would change their text and the precision of large numbers).
 */
export const LiveBatchMeta = z.object({
  v: z.literal(1),
  /** Answer within this many ms with what has been written by then; the rest counts as unsent. */
  reply_within_ms: z.number().int().positive(),
  events: z.array(LiveBatchEvent).min(1),
});
export type LiveBatchMeta = z.infer<typeof LiveBatchMeta>;

/** An edge's answer to step 2, aligned with the request's events. */
export const LiveBatchReply = z.object({
  v: z.literal(1),
  /** Per event, the sockets its frame was handed to once a socket proved receipt; 0 = not sent. */
  sockets: z.array(z.number().int().nonnegative()),
});
export type LiveBatchReply = z.infer<typeof LiveBatchReply>;

const LINE_FEED = 0x0a;

/** Step 2's message: the head's JSON, a line feed, the payloads in the head's order. */
export function encodeLiveBatch(meta: LiveBatchMeta, payloads: readonly Uint8Array[]): Uint8Array {
  const head = new TextEncoder().encode(JSON.stringify(meta));
  let size = head.byteLength + 1;
  for (const payload of payloads) size += payload.byteLength;
  const out = new Uint8Array(size);
  out.set(head, 0);
  out[head.byteLength] = LINE_FEED;
  let at = head.byteLength + 1;
  for (const payload of payloads) {
    out.set(payload, at);
    at += payload.byteLength;
  }
  return out;
}

/** Reads a step-2 message; throws a TypeError naming what is wrong with one that is malformed. */
export function decodeLiveBatch(data: Uint8Array): {
  meta: LiveBatchMeta;
  payloads: Uint8Array[];
} {
  const end = data.indexOf(LINE_FEED);
  if (end < 0) throw new TypeError('live batch: no line feed after the JSON head');
  let head: unknown;
  try {
    head = JSON.parse(new TextDecoder().decode(data.subarray(0, end)));
  } catch {
    throw new TypeError('live batch: the head is not JSON');
  }
  const parsed = LiveBatchMeta.safeParse(head);
  if (!parsed.success) throw new TypeError(`live batch: ${parsed.error.issues[0]?.message}`);
  const meta = parsed.data;
  const payloads: Uint8Array[] = [];
  let at = end + 1;
  for (const event of meta.events) {
    if (at + event.bytes > data.byteLength)
      throw new TypeError('live batch: the payloads are shorter than the head says');
    payloads.push(data.subarray(at, at + event.bytes));
    at += event.bytes;
  }
  if (at !== data.byteLength) throw new TypeError('live batch: bytes left after the last payload');
  return { meta, payloads };
}

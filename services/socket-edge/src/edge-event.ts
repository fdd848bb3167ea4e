import { EventHeaders, EventMeta } from '@herald/proto';
import type { MsgHdrs } from 'nats';

/** An event as it crossed NATS: the payload's JSON text as bytes, untouched, plus its metadata. */
export interface EdgeEvent {
  /** The id ingress assigned; redeliveries of a queued event keep it, so clients dedup on it. */
  id: string;
  /** Epoch ms at which ingress accepted the event. */
  ts: number;
  data: Uint8Array;
}

/**
 * Reads an event from a NATS message (live request or queued message) whose headers ingress set.
 * `fallback` supplies the metadata of a message without valid headers (not one ingress sent), so
 * the edge still delivers it rather than dropping it.
 */
export function edgeEventOf(
  headers: MsgHdrs | undefined,
  data: Uint8Array,
  fallback: () => { id: string; ts: number },
): EdgeEvent {
  // The shape ingress always writes, checked without zod (every queued and live event passes
  // here): a non-empty id and a non-negative integer ts, exactly what EventMeta accepts.
  const headerId = headers?.get(EventHeaders.id);
  const headerTs = Number(headers?.get(EventHeaders.ts) || Number.NaN);
  if (headerId && Number.isInteger(headerTs) && headerTs >= 0)
    return { id: headerId, ts: headerTs, data };
  const meta = EventMeta.safeParse({
    id: headers?.get(EventHeaders.id) || undefined,
    ts: headers?.get(EventHeaders.ts) || undefined,
  });
  const { id, ts } = meta.success ? meta.data : fallback();
  return { id, ts, data };
}

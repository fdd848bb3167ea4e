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
  const meta = EventMeta.safeParse({
    id: headers?.get(EventHeaders.id) || undefined,
    ts: headers?.get(EventHeaders.ts) || undefined,
  });
  const { id, ts } = meta.success ? meta.data : fallback();
  return { id, ts, data };
}

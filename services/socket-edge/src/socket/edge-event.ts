import { EventHeaders, EventMeta } from '@herald/proto';
import type { JsMsg, MsgHdrs } from 'nats';

/** An event as it crossed NATS: the payload's JSON text as bytes, untouched, plus its metadata. */
export interface EdgeEvent {
  /** The id ingress assigned; redeliveries of a queued event keep it, so clients dedup on it. */
  id: string;
  /** Epoch ms at which ingress accepted the event. */
  ts: number;
  data: Uint8Array;
  /** A topic event's copy (issue 44): its topic, which the herald.v1 frame carries. */
  topic?: string | undefined;
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
  const topic = headers?.get(EventHeaders.topic) || undefined;
  if (headerId && Number.isInteger(headerTs) && headerTs >= 0)
    return topic === undefined
      ? { id: headerId, ts: headerTs, data }
      : { id: headerId, ts: headerTs, data, topic };
  const meta = EventMeta.safeParse({
    id: headers?.get(EventHeaders.id) || undefined,
    ts: headers?.get(EventHeaders.ts) || undefined,
  });
  const { id, ts } = meta.success ? meta.data : fallback();
  return topic === undefined ? { id, ts, data } : { id, ts, data, topic };
}

/** nats.js 2.x's message internals, not in its types: the raw bytes and where the headers end. */
interface RawMsg {
  msg?: { _msg?: { hdr?: unknown }; _rdata?: unknown };
}

const STATUS_LINE = 'NATS/1.0\r\n';
const ID_LINE = `\r\n${EventHeaders.id}:`;
const TS_LINE = `\r\n${EventHeaders.ts}:`;
const TOPIC_LINE = `\r\n${EventHeaders.topic}:`;

/**
 * Reads a queued event from a JetStream message. The common case (the headers ingress wrote, no
 * status) is read from the raw header block without nats.js's `MsgHdrs`, whose decode validates
 * and maps every header of every message, work the drain would pay per event; any other case,
 * or a nats.js whose internals differ, goes through {@link edgeEventOf}.
 */
export function queuedEventOf(msg: JsMsg, fallback: () => { id: string; ts: number }): EdgeEvent {
  const block = rawHeaderText(msg);
  if (block !== undefined) {
    const id = headerValue(block, ID_LINE);
    const ts = Number(headerValue(block, TS_LINE) || Number.NaN);
    if (id && Number.isInteger(ts) && ts >= 0) {
      const topic = headerValue(block, TOPIC_LINE);
      return topic ? { id, ts, data: msg.data, topic } : { id, ts, data: msg.data };
    }
  }
  return edgeEventOf(msg.headers, msg.data, fallback);
}

/** The message's header block as text, when it is a plain one (no status) nats.js holds raw. */
function rawHeaderText(msg: JsMsg): string | undefined {
  const inner = (msg as unknown as RawMsg).msg;
  const end = inner?._msg?.hdr;
  const raw = inner?._rdata;
  if (typeof end !== 'number' || end <= 0 || !(raw instanceof Uint8Array) || end > raw.length)
    return undefined;
  const text = Buffer.from(raw.buffer, raw.byteOffset, end).toString('utf8');
  return text.startsWith(STATUS_LINE) ? text : undefined;
}

/**
 * The value of the first header line starting with `line` (CRLF, then the exact key and its
 * colon), trimmed as nats.js trims it; undefined when there is none. The block's own final CRLF
 * pair ends the last line.
 */
export function headerValue(block: string, line: string): string | undefined {
  const at = block.indexOf(line);
  if (at < 0) return undefined;
  const from = at + line.length;
  const end = block.indexOf('\r\n', from);
  return (end < 0 ? block.slice(from) : block.slice(from, end)).trim();
}

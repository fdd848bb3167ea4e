import { isUtf8 } from 'node:buffer';
import { AckFrame, encodeEventFrame, MAX_EVENTS_PER_FRAME, SUBPROTOCOL } from '@herald/proto';
import type { RawData } from 'ws';
import type { EdgeEvent } from './edge-event.js';

/**
 * How events are written to a socket. `plain`: the sender's payload JSON, nothing else, one text
 * frame per event (no acks). `herald.v1`: the JSON envelope `{"type":"event","id","ts","payload"}`,
 * which the client acks by id.
 */
export type Framing = 'plain' | typeof SUBPROTOCOL;

/**
 * Lists the subprotocols a client offered (`Sec-WebSocket-Protocol`, comma-separated) and picks
 * the framing. Anything but an offer of herald.v1 gets plain framing.
 */
export function framingOf(offered: string | string[] | undefined): Framing {
  const header = Array.isArray(offered) ? offered.join(',') : (offered ?? '');
  return header.split(',').some((p) => p.trim() === SUBPROTOCOL) ? SUBPROTOCOL : 'plain';
}

/** ws `handleProtocols`: select herald.v1 when offered, else no subprotocol (plain framing). */
export function selectProtocol(protocols: Set<string>): string | false {
  return protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false;
}

const decoder = new TextDecoder();

/**
 * The frames of one event, built at most once per framing however many sockets it goes to. The
 * payload is never parsed: plain framing sends its bytes as they came, herald.v1 splices its text
 * into the envelope.
 */
export class EventFrames {
  readonly event: EdgeEvent;
  #plain: Buffer | undefined;
  #v1: Buffer | undefined;

  constructor(event: EdgeEvent) {
    this.event = event;
  }

  /** The frame for a socket of this framing, and its size in bytes (for the slow-reader check). */
  frameFor(framing: Framing): { data: Buffer | string; bytes: number } {
    if (framing === 'plain') {
      this.#plain ??= Buffer.from(
        this.event.data.buffer,
        this.event.data.byteOffset,
        this.event.data.byteLength,
      );
      return { data: this.#plain, bytes: this.#plain.byteLength };
    }
    this.#v1 ??= v1Frame(this.event);
    return { data: this.#v1, bytes: this.#v1.byteLength };
  }
}

const UTF8_BOM = [0xef, 0xbb, 0xbf] as const;

/**
 * The herald.v1 envelope of an event as the bytes ws sends. A payload of valid UTF-8 (what ingress
 * stores) is copied in as it is, with no decode to a string and encode back (once per event in a
 * drain); an empty, BOM-led or invalid one goes through the text path, which gives `null`, drops
 * the BOM and replaces invalid bytes as before, so the bytes on the wire are the same either way.
 */
function v1Frame(event: EdgeEvent): Buffer {
  const data = event.data;
  const bom = data[0] === UTF8_BOM[0] && data[1] === UTF8_BOM[1] && data[2] === UTF8_BOM[2];
  if (data.byteLength === 0 || bom || !isUtf8(data)) {
    // An empty body is not JSON; `null` keeps the envelope valid (ingress never sends one).
    const payload = data.byteLength === 0 ? 'null' : decoder.decode(data);
    return Buffer.from(encodeEventFrame(event.id, event.ts, payload));
  }
  const head = `{"type":"event","id":${JSON.stringify(event.id)},"ts":${event.ts},"payload":`;
  const headBytes = Buffer.byteLength(head);
  const frame = Buffer.allocUnsafe(headBytes + data.byteLength + 1);
  frame.write(head, 0, headBytes, 'utf8');
  frame.set(data, headBytes);
  frame[frame.length - 1] = 0x7d; // }
  return frame;
}

/**
 * Reads a herald.v1 client frame: the acked event id, the ids of a list ack (the answer to an
 * `events` frame), or undefined when the frame is not a valid ack (binary, not JSON, wrong
 * shape). The caller counts and ignores those.
 */
export function parseAck(data: RawData, isBinary: boolean): string | string[] | undefined {
  if (isBinary) return undefined;
  if (Buffer.isBuffer(data)) {
    const id = canonicalAckId(data);
    if (id !== undefined) return id;
    const ids = canonicalAckIds(data);
    if (ids !== undefined) return ids;
  }
  const parsed = AckFrame.safeParse(clientFrameJson(data));
  if (!parsed.success) return undefined;
  return 'id' in parsed.data ? parsed.data.id : parsed.data.ids;
}

/** A text client frame's JSON value; undefined when it is not JSON. */
export function clientFrameJson(data: RawData): unknown {
  const text = Array.isArray(data)
    ? Buffer.concat(data).toString('utf8')
    : Buffer.isBuffer(data)
      ? data.toString('utf8')
      : Buffer.from(data).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const ACK_HEAD = Buffer.from('{"type":"ack","id":"');
const ACK_TAIL = Buffer.from('"}');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The id of an ack written exactly as the SDK writes it, `{"type":"ack","id":"<id>"}` with an id
 * of 1 to 64 characters and no escapes, read without JSON.parse and zod: a herald.v1 client sends
 * one per event, so this is the drain's per-event path. Anything else (other spacing, key order,
 * escapes, extra keys) is undefined here and goes through the full parse, which decides.
 */
function canonicalAckId(data: Buffer): string | undefined {
  const idBytes = data.length - ACK_HEAD.length - ACK_TAIL.length;
  if (idBytes < 1 || idBytes > 64 * 3) return undefined;
  if (data.compare(ACK_HEAD, 0, ACK_HEAD.length, 0, ACK_HEAD.length) !== 0) return undefined;
  const end = data.length - ACK_TAIL.length;
  if (data.compare(ACK_TAIL, 0, ACK_TAIL.length, end) !== 0) return undefined;
  for (let i = ACK_HEAD.length; i < end; i++) {
    const byte = data[i] as number;
    if (byte === QUOTE || byte === BACKSLASH || byte < 0x20) return undefined;
  }
  const id = data.toString('utf8', ACK_HEAD.length, end);
  return id.length <= 64 ? id : undefined;
}

const ACKS_HEAD = Buffer.from('{"type":"ack","ids":["');
const ACKS_TAIL = Buffer.from('"]}');
const COMMA = 0x2c;

/**
 * The ids of a list ack written exactly as the SDK writes it, `{"type":"ack","ids":["<id>",…]}`
 * (no spaces, ids of 1 to 64 characters without escapes, 1 to MAX_EVENTS_PER_FRAME of them), read
 * in one pass without JSON.parse and zod: one per `events` frame, the batched drain's ack path.
 * Anything else is undefined here and goes through the full parse, which decides.
 */
function canonicalAckIds(data: Buffer): string[] | undefined {
  const end = data.length - ACKS_TAIL.length;
  if (end <= ACKS_HEAD.length) return undefined;
  if (data.compare(ACKS_HEAD, 0, ACKS_HEAD.length, 0, ACKS_HEAD.length) !== 0) return undefined;
  if (data.compare(ACKS_TAIL, 0, ACKS_TAIL.length, end) !== 0) return undefined;
  const ids: string[] = [];
  let start = ACKS_HEAD.length;
  for (let i = start; i <= end; i++) {
    const byte = i === end ? QUOTE : (data[i] as number);
    if (byte === BACKSLASH || byte < 0x20) return undefined;
    if (byte !== QUOTE) continue;
    // An id ends here: `"` then `,"` before the next one, or the tail.
    if (i === start || ids.length === MAX_EVENTS_PER_FRAME) return undefined;
    const id = data.toString('utf8', start, i);
    if (id.length > 64) return undefined;
    ids.push(id);
    if (i === end) break;
    if (data[i + 1] !== COMMA || data[i + 2] !== QUOTE) return undefined;
    i += 2;
    start = i + 1;
  }
  return ids;
}

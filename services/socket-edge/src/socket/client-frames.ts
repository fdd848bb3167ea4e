import { AckFrame, MAX_EVENTS_PER_FRAME, TokenFrame } from '@herald/proto';
import type { RawData } from 'ws';

/**
 * A herald.v1 client frame, read once: an ack (one id, or the ids of a list ack answering an
 * `events` frame), a fresh recipient token, or an inbox request (`read`, `history`), which its
 * handler checks against its own schema to name the field at fault.
 */
export type ParsedClientFrame =
  | { type: 'ack'; ids: string | string[] }
  | { type: 'token'; token: string }
  | { type: 'read' | 'history'; frame: Record<string, unknown> };

/**
 * Reads a herald.v1 client frame once, by its type; undefined when it is none the edge takes
 * (binary, not JSON, no known type, wrong shape): the caller counts and ignores those. The SDK's
 * acks, one per event (or per `events` frame), are read without JSON.parse and zod.
 */
export function readClientFrame(data: RawData, isBinary: boolean): ParsedClientFrame | undefined {
  if (isBinary) return undefined;
  if (Buffer.isBuffer(data)) {
    const ids = canonicalAckId(data) ?? canonicalAckIds(data);
    if (ids !== undefined) return { type: 'ack', ids };
  }
  const json = clientFrameJson(data);
  if (typeof json !== 'object' || json === null) return undefined;
  const frame = json as Record<string, unknown>;
  switch (frame.type) {
    case 'ack': {
      const ack = AckFrame.safeParse(frame);
      if (!ack.success) return undefined;
      return { type: 'ack', ids: 'id' in ack.data ? ack.data.id : ack.data.ids };
    }
    case 'token': {
      const token = TokenFrame.safeParse(frame);
      return token.success ? { type: 'token', token: token.data.token } : undefined;
    }
    case 'read':
    case 'history':
      return { type: frame.type, frame };
    default:
      return undefined;
  }
}

/** A text client frame's JSON value; undefined when it is not JSON. */
function clientFrameJson(data: RawData): unknown {
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

import { type Scanned, Scanner, type Span } from '../raw-json.js';

/** One element of a batch's `events` array, as the scan found it. */
export type ScannedEvent = { span: Span } & Scanned;

/** A batch body's top level, plus each event's members when `events` is an array. */
export type ScannedBatch =
  | { kind: 'object'; members: Map<string, Span>; events: ScannedEvent[] | undefined }
  | { kind: Exclude<Scanned['kind'], 'object'> };

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const COLON = 0x3a;
const COMMA = 0x2c;

/**
 * Validates a batch body as one JSON text in a single pass (as strictly as JSON.parse) and
 * records where the top-level members sit and, inside the `events` array, where each event's
 * members sit. No value is built: every payload stays a span of the body's bytes.
 */
export function scanBatchJson(bytes: Uint8Array): ScannedBatch {
  const s = new Scanner(bytes);
  let i = s.skipWs(0);
  if (bytes[i] !== OPEN_BRACE) {
    const kind = s.kindAt(i);
    i = s.skipWs(s.value(i));
    if (i !== bytes.length) s.fail(i, 'end of input');
    return { kind };
  }
  const members = new Map<string, Span>();
  let events: ScannedEvent[] | undefined;
  i = s.skipWs(i + 1);
  if (bytes[i] === CLOSE_BRACE) {
    i++;
  } else {
    for (;;) {
      if (bytes[i] !== QUOTE) s.fail(i, "'\"'");
      const keyEnd = s.string(i);
      const key = s.key(i, keyEnd);
      i = s.skipWs(keyEnd);
      if (bytes[i] !== COLON) s.fail(i, "':'");
      const start = s.skipWs(i + 1);
      let end: number;
      if (key === 'events' && bytes[start] === OPEN_BRACKET) {
        events = [];
        end = elements(s, bytes, start, events);
      } else {
        if (key === 'events') events = undefined; // the last `events` wins, as with JSON.parse
        end = s.value(start);
      }
      members.delete(key);
      members.set(key, { start, end });
      i = s.skipWs(end);
      if (bytes[i] === COMMA) {
        i = s.skipWs(i + 1);
        continue;
      }
      if (bytes[i] !== CLOSE_BRACE) s.fail(i, "',' or '}'");
      i++;
      break;
    }
  }
  i = s.skipWs(i);
  if (i !== bytes.length) s.fail(i, 'end of input');
  return { kind: 'object', members, events };
}

/** The array at `i` (its `[`): records each element into `out`; returns the index past `]`. */
function elements(s: Scanner, bytes: Uint8Array, i: number, out: ScannedEvent[]): number {
  i = s.skipWs(i + 1);
  if (bytes[i] === CLOSE_BRACKET) return i + 1;
  for (;;) {
    const start = i;
    let end: number;
    if (bytes[i] === OPEN_BRACE) {
      const members = new Map<string, Span>();
      end = s.object(i, members);
      out.push({ span: { start, end }, kind: 'object', members });
    } else {
      const kind = s.kindAt(i);
      end = s.value(i);
      out.push({ span: { start, end }, kind });
    }
    i = s.skipWs(end);
    if (bytes[i] === COMMA) {
      i = s.skipWs(i + 1);
      continue;
    }
    if (bytes[i] !== CLOSE_BRACKET) s.fail(i, "',' or ']'");
    return i + 1;
  }
}

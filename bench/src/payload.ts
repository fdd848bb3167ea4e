/**
 * The benchmark payload: a JSON object of an exact byte size whose first field is a fixed-width
 * sequence number, so a receiver reads it at a known offset without parsing the frame. Every
 * server (Herald and the baselines) carries the same bytes.
 */

const HEAD = '{"seq":"';
const MID = '","pad":"';
const TAIL = '"}';
export const SEQ_DIGITS = 10;
/** The smallest payload that still holds a sequence number. */
export const MIN_PAYLOAD_BYTES = HEAD.length + SEQ_DIGITS + MID.length + TAIL.length;
const MAX_SEQ = 10 ** SEQ_DIGITS - 1;

export interface PayloadMaker {
  readonly bytes: number;
  /** The payload's JSON text for sequence number seq. */
  make(seq: number): string;
}

export function payloadMaker(bytes: number): PayloadMaker {
  if (!Number.isInteger(bytes) || bytes < MIN_PAYLOAD_BYTES) {
    throw new RangeError(`payload size must be an integer >= ${MIN_PAYLOAD_BYTES}, got ${bytes}`);
  }
  const pad = 'x'.repeat(bytes - MIN_PAYLOAD_BYTES);
  return {
    bytes,
    make(seq) {
      if (!Number.isInteger(seq) || seq < 0 || seq > MAX_SEQ) {
        throw new RangeError(`seq must be an integer 0..${MAX_SEQ}, got ${seq}`);
      }
      return `${HEAD}${String(seq).padStart(SEQ_DIGITS, '0')}${MID}${pad}${TAIL}`;
    },
  };
}

/** The sequence number of a payload's text as it arrived (plain framing), or -1 if it is not one. */
export function seqOf(text: string, offset = 0): number {
  if (!text.startsWith(HEAD, offset)) return -1;
  const start = offset + HEAD.length;
  const n = Number(text.slice(start, start + SEQ_DIGITS));
  return Number.isInteger(n) ? n : -1;
}

/** Where the payload starts inside a herald.v1 event frame, or -1. */
export function payloadOffsetInEnvelope(frame: string): number {
  const at = frame.indexOf('"payload":');
  return at === -1 ? -1 : at + '"payload":'.length;
}

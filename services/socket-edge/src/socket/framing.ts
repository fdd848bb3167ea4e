import { isUtf8 } from 'node:buffer';
import { encodeEventFrame, SUBPROTOCOL } from '@herald/proto';
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
    return Buffer.from(encodeEventFrame(event.id, event.ts, payload, event.topic));
  }
  const topic = event.topic === undefined ? '' : `,"topic":${JSON.stringify(event.topic)}`;
  const head = `{"type":"event","id":${JSON.stringify(event.id)},"ts":${event.ts}${topic},"payload":`;
  const headBytes = Buffer.byteLength(head);
  const frame = Buffer.allocUnsafe(headBytes + data.byteLength + 1);
  frame.write(head, 0, headBytes, 'utf8');
  frame.set(data, headBytes);
  frame[frame.length - 1] = 0x7d; // }
  return frame;
}

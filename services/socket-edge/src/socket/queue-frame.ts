import { WebSocket } from 'ws';
import type { Delivery } from './delivery.js';
import { corkUntilTickEnd } from './tick-cork.js';

/** What one herald.v1 `events` frame may carry (a socket that connected with `batch=1`). */
export interface QueueFrameLimits {
  /** Most events per frame: QUEUE_FRAME_EVENTS, clamped so their list ack fits `ackBytes`. */
  events: number;
  /** Most bytes per frame (QUEUE_FRAME_BYTES); a single event larger than it goes alone. */
  bytes: number;
  /** Largest frame the client may send (MAX_CLIENT_FRAME_BYTES): the frame's list ack must fit. */
  ackBytes: number;
}

const HEAD = Buffer.from('{"type":"events","events":[');
const TAIL = Buffer.from(']}');
const COMMA = Buffer.from(',');
const OPEN = Buffer.from('{');
/** `{"type":"event",`: what an `event` frame has before its `"id"` and an `events` entry has not. */
const EVENT_HEAD_BYTES = 16;
/**
 * A list ack is `{"type":"ack","ids":[` (21 bytes), its ids quoted and comma-separated, and `]}`:
 * counting each id with its quotes and a comma, 22 bytes more (no comma after the last).
 */
export const LIST_ACK_OVERHEAD = 22;
/** One UUID in a list ack: 36 characters, two quotes and a comma. */
export const LIST_ACK_BYTES_PER_UUID = 39;

/**
 * The queued events written to one `batch=1` socket in the current tick, sent as one `events`
 * frame at the tick's end (never later: a frame is not held to fill), or earlier once it holds
 * `events` events or `bytes` bytes, or its list ack would outgrow `ackBytes`. Each event is built
 * once as its `event` frame (shared by every socket it goes to); its entry here is that frame
 * without `"type":"event",`, so the payload is copied once more, into the frame, and never parsed.
 * A frame of one event is sent as that `event` frame, byte for byte. The socket's ledger tracks
 * each event by id as before, so each is proven (and JetStream-acked) only by an ack of its id.
 */
export class QueueFrame {
  readonly #ws: WebSocket;
  readonly #limits: QueueFrameLimits;
  #frames: Buffer[] = [];
  #deliveries: Delivery[] = [];
  #bytes = 0;
  #ackBytes = 0;
  /** A send at the tick's end is arranged (the transport is corked until then). */
  #armed = false;

  constructor(ws: WebSocket, limits: QueueFrameLimits) {
    this.#ws = ws;
    this.#limits = limits;
  }

  /** Adds one event, given as its herald.v1 `event` frame; sent by the tick's end at the latest. */
  add(frame: Buffer, id: string, delivery: Delivery): void {
    const entryBytes = frame.byteLength - EVENT_HEAD_BYTES + 2; // its `{` and a comma
    const ackBytes = JSON.stringify(id).length + 1;
    const n = this.#frames.length;
    if (
      n > 0 &&
      (HEAD.length + TAIL.length + this.#bytes + entryBytes > this.#limits.bytes ||
        LIST_ACK_OVERHEAD + this.#ackBytes + ackBytes > this.#limits.ackBytes)
    ) {
      this.flush();
    }
    if (!this.#armed) {
      this.#armed = true;
      corkUntilTickEnd(this.#ws, endTick, this);
    }
    this.#frames.push(frame);
    this.#deliveries.push(delivery);
    this.#bytes += entryBytes;
    this.#ackBytes += ackBytes;
    if (
      this.#frames.length >= this.#limits.events ||
      HEAD.length + TAIL.length + this.#bytes >= this.#limits.bytes
    ) {
      this.flush();
    }
  }

  /** Sends what is held now (before a live event, so frames keep write order). */
  flush(): void {
    const frames = this.#frames;
    if (frames.length === 0) return;
    const deliveries = this.#deliveries;
    this.#frames = [];
    this.#deliveries = [];
    this.#bytes = 0;
    this.#ackBytes = 0;
    // A closing socket's close reports every unproven write lost (its ledger), these included.
    if (this.#ws.readyState !== WebSocket.OPEN) return;
    const data = frames.length === 1 ? (frames[0] as Buffer) : eventsFrame(frames);
    this.#ws.send(data, { binary: false }, (err) => {
      if (!err) for (const d of deliveries) d.written();
    });
  }

  /** The tick ended: what it held goes out (the transport is uncorked right after). */
  endTick(): void {
    this.#armed = false;
    this.flush();
  }
}

function endTick(frame: QueueFrame): void {
  frame.endTick();
}

/** `{"type":"events","events":[{"id":…},…]}` from the events' `event` frames, in one copy. */
function eventsFrame(frames: readonly Buffer[]): Buffer {
  let total = HEAD.length + TAIL.length + frames.length - 1;
  for (const f of frames) total += f.byteLength - EVENT_HEAD_BYTES + 1;
  const out = Buffer.allocUnsafe(total);
  let at = HEAD.copy(out, 0);
  for (let i = 0; i < frames.length; i++) {
    const f = frames[i] as Buffer;
    if (i > 0) at += COMMA.copy(out, at);
    at += OPEN.copy(out, at);
    at += f.copy(out, at, EVENT_HEAD_BYTES);
  }
  TAIL.copy(out, at);
  return out;
}

import { ErrorCode, type MsgHdrs, type NatsConnection, NatsError } from 'nats';
import { EventMsgHdrs } from './event-headers.js';

export interface TurnPublishOptions {
  reply?: string;
  headers?: MsgHdrs;
}

/** The part of a NATS connection a fire-and-forget publisher uses: `nc` itself or a TurnPublisher. */
export interface Publisher {
  publish(subject: string, payload: string | Uint8Array, options?: TurnPublishOptions): void;
}

interface Pending {
  subject: string;
  /** A function: the payload is built when the turn's messages leave (see publishBuilt). */
  payload: string | Uint8Array | (() => Uint8Array);
  options: TurnPublishOptions | undefined;
  onError: ((err: unknown) => void) | undefined;
}

/**
 * Publishes at the end of the event-loop turn (setImmediate), in call order, so that nats.js
 * writes every message of a turn to its socket in one write. nats.js flushes its outbound buffer
 * on a microtask, which under concurrent HTTP requests means one socket write per publish: each
 * request's body arrives in its own I/O callback, and its live push, its JetStream publish, its
 * `rt.queued` notice and its status record each ended in their own `write()` syscall. Deferred
 * to the turn's end, the publishes of every request read in the same I/O phase share one write.
 *
 * Nothing is reordered: messages leave in the order `publish` was called. A message is handed to
 * nats.js at most one turn later, which on an idle process is at once.
 *
 * On a nats.js connection the turn's messages are written as one buffer of the bytes `publish`
 * writes for each (`writeTurn`): nats.js's `publish` makes a TextEncoder result per protocol line
 * and per header encode, four chunks per message, for every message of the dispatch path.
 * `{ wire: false }` (and any `nc` without nats.js's protocol handler) publishes message by message.
 */
export class TurnPublisher implements Publisher {
  readonly #nc: Pick<NatsConnection, 'publish'>;
  /** nats.js's protocol handler behind `nc`, when it has one: the turn's bytes go to it at once. */
  readonly #wire: WireConnection | undefined;
  #pending: Pending[] = [];
  #scheduled = false;

  constructor(nc: Pick<NatsConnection, 'publish'>, opts: { wire?: boolean } = {}) {
    this.#nc = nc;
    this.#wire = opts.wire === false ? undefined : wireOf(nc);
  }

  /**
   * Queues a publish for the end of this turn. `onError` hears a publish nats.js refuses then
   * (connection closed or draining); without it the error is dropped, as for a fire-and-forget
   * notice.
   */
  publish(
    subject: string,
    payload: string | Uint8Array,
    options?: TurnPublishOptions,
    onError?: (err: unknown) => void,
  ): void {
    this.#pending.push({ subject, payload, options, onError });
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flush);
    }
  }

  /**
   * Queues a publish whose payload is built at the end of this turn, when the turn's messages are
   * handed to nats.js: its place in the order is taken now, its content may still grow until then
   * (a StatusBatcher adds the turn's later records to it). `build` runs once, in the flush.
   * `options`: as publish's (a reply subject for the stream's PubAck).
   */
  publishBuilt(subject: string, build: () => Uint8Array, options?: TurnPublishOptions): void {
    this.#pending.push({ subject, payload: build, options, onError: undefined });
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flush);
    }
  }

  readonly #flush = (): void => {
    this.#scheduled = false;
    const batch = this.#pending;
    this.#pending = [];
    if (this.#wire) {
      writeTurn(this.#wire, batch);
      return;
    }
    for (const p of batch) {
      try {
        const payload = typeof p.payload === 'function' ? p.payload() : p.payload;
        this.#nc.publish(p.subject, payload, p.options);
      } catch (err) {
        p.onError?.(err);
      }
    }
  };
}

/**
 * The part of nats.js's NatsConnectionImpl a turn's bytes go through: `nc.publish` does its
 * checks, encodes its protocol line with a TextEncoder (an ArrayBuffer per message) and hands the
 * line, headers, payload and CRLF to `protocol.sendCommand`, which copies them into the
 * connection's outbound buffer. Typed by nats.js (nats-base-client/nats.d.ts, protocol.d.ts).
 */
interface WireConnection {
  isClosed(): boolean;
  protocol: {
    noMorePublishing: boolean;
    info?: { max_payload: number; headers?: boolean } | undefined;
    outMsgs: number;
    outBytes: number;
    sendCommand(cmd: string | Uint8Array, ...payloads: Uint8Array[]): void;
  };
}

function wireOf(nc: unknown): WireConnection | undefined {
  const c = nc as Partial<WireConnection> | null;
  return typeof c?.isClosed === 'function' && typeof c.protocol?.sendCommand === 'function'
    ? (c as WireConnection)
    : undefined;
}

const CRLF = '\r\n';

/**
 * Writes a turn's messages as the bytes `nc.publish` would write for each, in order, handed to
 * nats.js in one `sendCommand`: protocol lines, header texts and string payloads are written into
 * one buffer (no TextEncoder result per message, no per-message chunk bookkeeping), byte payloads
 * copied in. The refusals are `nc.publish`'s own, per message (`onError`), checked in its order:
 * closed or draining connection, empty subject, bad payload, headers the server does not take,
 * a message over the server's max_payload. nats.js's counters (`stats()`) count as for publish.
 */
function writeTurn(wire: WireConnection, batch: Pending[]): void {
  const proto = wire.protocol;
  const refusal = wire.isClosed()
    ? NatsError.errorForCode(ErrorCode.ConnectionClosed)
    : proto.noMorePublishing
      ? NatsError.errorForCode(ErrorCode.ConnectionDraining)
      : undefined;
  // Runs of text and byte chunks, in wire order; `upper` bounds their UTF-8 size.
  const chunks: (string | Uint8Array)[] = [];
  let text = '';
  let upper = 0;
  const bytes = (b: Uint8Array) => {
    if (text.length > 0) {
      chunks.push(text);
      upper += text.length * 3;
      text = '';
    }
    chunks.push(b);
    upper += b.length;
  };
  for (const p of batch) {
    let payload: string | Uint8Array;
    try {
      payload = typeof p.payload === 'function' ? p.payload() : p.payload;
    } catch (err) {
      p.onError?.(err);
      continue;
    }
    if (refusal) {
      p.onError?.(refusal);
      continue;
    }
    try {
      if (p.subject.length === 0) throw NatsError.errorForCode(ErrorCode.BadSubject);
      const isText = typeof payload === 'string';
      if (!isText && !(payload instanceof Uint8Array)) {
        throw NatsError.errorForCode(ErrorCode.BadPayload);
      }
      const dataLen = isText ? Buffer.byteLength(payload) : payload.length;
      const reply = p.options?.reply || '';
      const headers = p.options?.headers;
      let len = dataLen;
      let hlen = 0;
      let hText: string | undefined;
      let hBytes: Uint8Array | undefined;
      if (headers) {
        if (proto.info && !proto.info.headers) {
          throw new NatsError('headers', ErrorCode.ServerOptionNotAvailable);
        }
        hText = headers instanceof EventMsgHdrs ? headers.wireText() : undefined;
        // nats.js's own encoding of any other MsgHdrs (its MsgHdrsImpl), as `publish` calls it.
        if (hText === undefined) hBytes = (headers as unknown as { encode(): Uint8Array }).encode();
        hlen = hText === undefined ? (hBytes as Uint8Array).length : Buffer.byteLength(hText);
        len += hlen;
      }
      if (proto.info && len > proto.info.max_payload) {
        throw NatsError.errorForCode(ErrorCode.MaxPayloadExceeded);
      }
      proto.outBytes += len;
      proto.outMsgs++;
      if (headers) {
        text += reply
          ? `HPUB ${p.subject} ${reply} ${hlen} ${len}\r\n`
          : `HPUB ${p.subject} ${hlen} ${len}\r\n`;
        if (hText !== undefined) text += hText;
        else bytes(hBytes as Uint8Array);
      } else {
        text += reply ? `PUB ${p.subject} ${reply} ${len}\r\n` : `PUB ${p.subject} ${len}\r\n`;
      }
      if (typeof payload === 'string') text += payload;
      else bytes(payload);
      text += CRLF;
    } catch (err) {
      p.onError?.(err);
    }
  }
  if (text.length > 0) {
    chunks.push(text);
    upper += text.length * 3;
  }
  if (chunks.length === 0) return;
  const out = Buffer.allocUnsafe(upper);
  let at = 0;
  for (const c of chunks) {
    if (typeof c === 'string') at += out.write(c, at);
    else {
      out.set(c, at);
      at += c.length;
    }
  }
  proto.sendCommand(out.subarray(0, at));
}

import { ErrorCode, Match, MsgHdrsImpl, NatsError } from 'nats';

const LINE_BREAK = /[\r\n]/;

/**
 * An event's NATS headers, built for the hot path of ingress: each header is appended once (the
 * keys are the project's constants, the values a line each), and the wire text is kept as the
 * headers are added, so encoding it is one pooled Buffer.from, cached until the next change.
 *
 * nats.js's own `MsgHdrs.set` scans every key twice (a delete, then an append that validates the
 * key and looks it up again) and `encode` rebuilds the text from its map at every publish; an
 * offline event's headers were set four times and encoded twice (live push, JetStream publish).
 * The bytes are the same as nats.js writes for the same headers (event-headers.test.ts), and the
 * object stays a full MsgHdrs: reads see every header, and a change through `set`, `append` or
 * `delete` falls back to nats.js's own encoding.
 */
export class EventMsgHdrs extends MsgHdrsImpl {
  /** The wire text so far without its closing blank line; undefined once nats.js's methods changed it. */
  #text: string | undefined = 'NATS/1.0';
  #bytes: Uint8Array | undefined;

  constructor(entries: Iterable<readonly [string, string]> = []) {
    super();
    for (const [key, value] of entries) this.add(key, value);
  }

  /**
   * Appends a header the headers do not hold yet (any other case goes through `set`). The key
   * must be a valid header name; the value may not hold CR or LF and is trimmed, as nats.js does.
   */
  add(key: string, value: string): this {
    if (this.#text === undefined || this.headers.has(key)) {
      this.set(key, value);
      return this;
    }
    if (LINE_BREAK.test(value)) {
      throw new NatsError(
        'invalid header value - \\r and \\n are not allowed.',
        ErrorCode.BadHeader,
      );
    }
    const v = value.trim();
    this.headers.set(key, [v]);
    this.#text += `\r\n${key}: ${v}`;
    this.#bytes = undefined;
    return this;
  }

  /**
   * The headers' wire text (what `encode` encodes) while it is kept, else undefined (after a change
   * through nats.js's own methods): the turn publisher writes it straight into the turn's bytes.
   */
  wireText(): string | undefined {
    return this.#text === undefined ? undefined : `${this.#text}\r\n\r\n`;
  }

  override encode(): Uint8Array {
    if (this.#text === undefined) return super.encode();
    // Buffer.from, not TextEncoder: the same UTF-8 bytes, but a small Buffer is a slice of Node's
    // shared pool, where each TextEncoder result is its own ArrayBuffer, allocated and collected
    // twice per offline event (its two header encodes).
    this.#bytes ??= Buffer.from(`${this.#text}\r\n\r\n`);
    return this.#bytes;
  }

  override set(k: string, v: string, match: Match = Match.Exact): void {
    this.#changed();
    super.set(k, v, match);
  }

  override append(k: string, v: string, match: Match = Match.Exact): void {
    this.#changed();
    super.append(k, v, match);
  }

  override delete(k: string, match: Match = Match.Exact): void {
    this.#changed();
    super.delete(k, match);
  }

  #changed(): void {
    this.#text = undefined;
    this.#bytes = undefined;
  }
}

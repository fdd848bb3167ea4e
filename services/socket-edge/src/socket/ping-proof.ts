import { randomFillSync } from 'node:crypto';

/** Bytes of a proof ping's payload: unguessable, so only a client that read the ping can answer it. */
const TOKEN_BYTES = 8;
/** Random bytes drawn at a time, tokens being cut from them (one system call per 512 pings). */
const POOL_BYTES = TOKEN_BYTES * 512;
let pool = Buffer.alloc(0);
let poolOffset = 0;

function nextToken(): Buffer {
  if (poolOffset + TOKEN_BYTES > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
    poolOffset = 0;
  }
  const token = pool.subarray(poolOffset, poolOffset + TOKEN_BYTES);
  poolOffset += TOKEN_BYTES;
  return token;
}

/**
 * Plain framing's proof of receipt: after frames are written, a WebSocket ping goes out, and its
 * pong proves every frame written before it (TCP keeps order, so a client whose WebSocket layer
 * answers the ping has read them all; every browser and WebSocket library answers pings, RFC 6455
 * §5.5.2). Coalesced: at most one proof ping is outstanding per socket, sent on the next turn of
 * the event loop after a write so a burst of frames shares it; writes made while it is out wait
 * for the next one, sent when its pong arrives. Its payload is 8 random bytes: a client cannot
 * answer a ping it has not read (an audit forged the pongs of a counter, `p1`, `p2`, …, without
 * reading a byte, and every event was answered 200 while the edge buffered them all), and the
 * pong of a heartbeat ping (empty payload) is never taken for it.
 */
export class PingProof {
  readonly #ping: (token: Buffer) => void;
  readonly #prove: (seq: number) => void;
  readonly #lastSeq: () => number;
  #outstanding: { token: Buffer; covers: number } | undefined;
  #scheduled: NodeJS.Immediate | undefined;
  #proven = 0;
  #stopped = false;
  #flushDue = false;

  /**
   * @param ping sends a ping with this payload
   * @param prove the client proved every write up to this sequence
   * @param lastSeq the sequence of the latest write
   */
  constructor(ping: (token: Buffer) => void, prove: (seq: number) => void, lastSeq: () => number) {
    this.#ping = ping;
    this.#prove = prove;
    this.#lastSeq = lastSeq;
  }

  /**
   * A frame was written: make sure a ping will cover it, on the next turn of the event loop. An
   * owner that sends its frames in one write per tick calls {@link flush} instead, at the end of
   * the tick, so the ping joins the frames' write.
   */
  wrote(): void {
    if (this.#outstanding || this.#scheduled || this.#stopped) return;
    this.#scheduled = setImmediate(() => {
      this.#scheduled = undefined;
      this.#send();
    });
  }

  /** A pong arrived: if it answers the outstanding proof ping, its writes are proven. */
  pong(data: Buffer): void {
    const out = this.#outstanding;
    if (!out || !data.equals(out.token)) return;
    this.#proved(out);
  }

  /**
   * The answer to a proof ping sent in-band by a socket's own protocol (`SocketWire`: the Pusher
   * wing's `pusher:ping`, answered by `pusher:pong`), which carries no token: such pings are
   * answered in order and at most one is out, so an answer proves the outstanding one. Ignored
   * while none is out.
   */
  answered(): void {
    const out = this.#outstanding;
    if (out) this.#proved(out);
  }

  #proved(out: { token: Buffer; covers: number }): void {
    this.#outstanding = undefined;
    this.#proven = out.covers;
    this.#prove(out.covers);
    if (this.#lastSeq() > this.#proven) this.wrote();
  }

  /**
   * Sends the proof ping now if writes are unproven and none is outstanding (a ping scheduled by
   * {@link wrote} is sent now instead). The edge calls it at the end of a tick in which it wrote
   * to the socket, before uncorking it, so frame and ping leave in one TLS write.
   */
  flush(): void {
    this.#flushDue = false;
    if (this.#scheduled) clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    this.#send();
  }

  /**
   * For an owner that calls {@link flush} at the end of each tick it wrote in: true for the first
   * write since the last flush (the owner then arranges the flush), false for the tick's others.
   */
  claimFlush(): boolean {
    if (this.#flushDue) return false;
    this.#flushDue = true;
    return true;
  }

  stop(): void {
    this.#stopped = true;
    if (this.#scheduled) clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
  }

  #send(): void {
    if (this.#stopped || this.#outstanding || this.#lastSeq() <= this.#proven) return;
    const token = nextToken();
    this.#outstanding = { token, covers: this.#lastSeq() };
    this.#ping(token);
  }
}

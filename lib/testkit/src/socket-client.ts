import WebSocket from 'ws';

export interface SocketOptions {
  apiKey: string;
  recipient: string;
  client?: 'web' | 'mobile';
  /** Offer the herald.v1 subprotocol (envelopes and acks). */
  v1?: boolean;
  /** Answer herald.v1 events with an ack automatically (an `events` frame: one list ack). Default true. */
  autoAck?: boolean;
  /** Connect with `batch=1`: queued events may come several to an `events` frame. */
  batch?: boolean;
  origin?: string;
  /** Extra raw query string appended (for bad-parameter tests). */
  query?: string;
  /** A recipient token, sent as `token=` (keys that require one). */
  token?: string;
  /**
   * Answer each ping this long after it arrived instead of at once: a client that reads every frame
   * but whose proof of receipt (plain framing: the pong) is slow, as under load. Default 0.
   */
  pongDelayMs?: number;
}

export interface Frame {
  text: string;
  /** Parsed herald.v1 envelope (undefined in plain framing). */
  envelope?: {
    type: string;
    id: string;
    ts: number;
    payload: unknown;
    error?: { code: string; message: string };
    /** An `events` frame's events (batch=1 sockets). */
    events?: Array<{ id: string; ts: number; payload: unknown }>;
  };
}

/** Longest part of a frame's text kept in `invalidFrames`. */
const INVALID_FRAME_TEXT_CHARS = 200;

/**
 * A test WebSocket that records every frame, so a test can wait for the nth one, and reports how
 * it ended: an HTTP status for a refused upgrade, or the close code and reason.
 */
export class TestSocket {
  readonly ws: WebSocket;
  readonly frames: Frame[] = [];
  /**
   * herald.v1 frames that were not JSON (text cut to 200 chars): recorded rather than thrown, as a
   * throw in the socket's message listener would only surface as an uncaught exception.
   */
  readonly invalidFrames: Array<{ text: string; at: number }> = [];
  readonly opened: Promise<void>;
  readonly ended: Promise<{ code: number; reason: string; httpStatus?: number; httpBody?: string }>;
  #waiters: Array<() => void> = [];

  constructor(wsUrl: string, ca: string, opts: SocketOptions) {
    const q =
      opts.query ??
      new URLSearchParams({
        api_key: opts.apiKey,
        recipient: opts.recipient,
        client: opts.client ?? 'mobile',
        ...(opts.token === undefined ? {} : { token: opts.token }),
        ...(opts.batch ? { batch: '1' } : {}),
      }).toString();
    const pongDelayMs = opts.pongDelayMs ?? 0;
    this.ws = new WebSocket(`${wsUrl}/ws/connect?${q}`, opts.v1 ? ['herald.v1'] : [], {
      ca,
      ...(opts.origin ? { origin: opts.origin } : {}),
      autoPong: pongDelayMs === 0,
    });
    if (pongDelayMs > 0) {
      this.ws.on('ping', (data) => {
        setTimeout(() => {
          if (this.ws.readyState === WebSocket.OPEN) this.ws.pong(data);
        }, pongDelayMs);
      });
    }
    const autoAck = opts.autoAck ?? true;
    this.ws.on('message', (data) => {
      const text = data.toString('utf8');
      const frame: Frame = { text };
      if (opts.v1) {
        try {
          frame.envelope = JSON.parse(text);
        } catch {
          this.invalidFrames.push({
            text: text.slice(0, INVALID_FRAME_TEXT_CHARS),
            at: Date.now(),
          });
        }
        if (autoAck && frame.envelope?.type === 'event') this.ack(frame.envelope.id);
        if (autoAck && frame.envelope?.type === 'events' && frame.envelope.events)
          this.ackList(frame.envelope.events.map((e) => e.id));
      }
      this.frames.push(frame);
      for (const w of this.#waiters.splice(0)) w();
    });
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
      this.ws.once('unexpected-response', () => reject(new Error('upgrade refused')));
    });
    this.opened.catch(() => {});
    this.ended = new Promise((resolve) => {
      this.ws.once('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') }));
      this.ws.once('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            code: 0,
            reason: '',
            httpStatus: res.statusCode ?? 0,
            httpBody: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      });
    });
  }

  ack(id: string): void {
    this.ws.send(JSON.stringify({ type: 'ack', id }));
  }

  /** Acks every listed id in one frame (the answer to an `events` frame). */
  ackList(ids: string[]): void {
    this.ws.send(JSON.stringify({ type: 'ack', ids }));
  }

  /** Sends a fresh recipient token in-band (herald.v1). */
  sendToken(token: string): void {
    this.ws.send(JSON.stringify({ type: 'token', token }));
  }

  /** Resolves when at least n frames arrived; rejects after timeoutMs with what did arrive. */
  async waitForFrames(n: number, timeoutMs = 10_000): Promise<Frame[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.frames.length < n) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`expected ${n} frames, got ${this.frames.length}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.frames.slice(0, n);
  }

  /** Resolves when at least n events arrived (herald.v1, counting each of an `events` frame's). */
  async waitForEvents(n: number, timeoutMs = 10_000): Promise<NonNullable<Frame['envelope']>[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.events().length < n) {
      if (Date.now() > deadline)
        throw new Error(`expected ${n} events, got ${this.events().length}`);
      await this.waitForFrames(this.frames.length + 1, Math.max(1, deadline - Date.now()));
    }
    return this.events().slice(0, n);
  }

  /** Events only (herald.v1), in arrival order: each `event` frame, and each of an `events` frame. */
  events(): NonNullable<Frame['envelope']>[] {
    return this.frames.flatMap((f) => {
      if (f.envelope?.type === 'event') return [f.envelope];
      if (f.envelope?.type === 'events' && f.envelope.events)
        return f.envelope.events.map((e) => ({ type: 'event', ...e }));
      return [];
    });
  }

  close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    const done = this.ended.then(() => undefined);
    this.ws.close();
    return done;
  }

  /** Kills the TCP connection without a close handshake (a dropped network). */
  drop(): Promise<void> {
    const done = this.ended.then(() => undefined);
    this.ws.terminate();
    return done;
  }
}

export function openSocket(wsUrl: string, ca: string, opts: SocketOptions): TestSocket {
  return new TestSocket(wsUrl, ca, opts);
}

import type { Socket } from 'node:net';
import WebSocket from 'ws';
import type { DeliveryLedger } from './ledger.js';

export interface DeviceClientOptions {
  wsUrl: string;
  ca: string;
  apiKey: string;
  recipient: string;
  device: string;
  ledger: DeliveryLedger;
  /** Stops reading its socket for `slowPauseMs` every `slowEveryMs`: a slow reader. */
  slow?: { pauseMs: number; everyMs: number };
}

/** A delay with jitter, so a fleet that lost its edge does not come back in one burst. */
const backoffMs = () => 300 + Math.floor(Math.random() * 1200);

/**
 * One installation of the app: a herald.v1 socket with a device id and `batch=1`, which records
 * every event it gets in the ledger and acks it (a list ack for an `events` frame), as the SDK
 * does. Held open (`hold`), it reconnects after every close (an edge restart, a NATS restart)
 * until released; or it visits (`visit`): connects, stays a while, leaves.
 */
export class DeviceClient {
  readonly opts: DeviceClientOptions;
  #ws: WebSocket | undefined;
  #held = false;
  #timers = new Set<NodeJS.Timeout>();
  /** Connects that opened, and frames the client could not read. */
  opens = 0;
  badFrames = 0;
  /** Answers to the inbox requests (an `inbox` count or a `history` page with a ref), and errors. */
  inboxAnswers = 0;
  inboxErrors = 0;
  #ref = 0;

  constructor(opts: DeviceClientOptions) {
    this.opts = opts;
  }

  get open(): boolean {
    return this.#ws?.readyState === WebSocket.OPEN;
  }

  /** Keeps a socket open until {@link release}: reconnects after each close. */
  hold(): void {
    this.#held = true;
    if (!this.#ws) this.#connect();
  }

  /** Connects (unless open), stays `ms`, closes; resolves once closed. */
  async visit(ms: number): Promise<void> {
    if (!this.#ws) this.#connect();
    await new Promise<void>((r) => this.#later(() => r(), ms));
    if (!this.#held) await this.#close();
  }

  /** Closes the socket and opens a new one (a device that gives up on a quiet socket). */
  async reconnect(): Promise<void> {
    const held = this.#held;
    this.#held = false;
    await this.#close();
    this.#held = held;
    this.#connect();
  }

  /** Stops reconnecting and closes. */
  async release(): Promise<void> {
    this.#held = false;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    await this.#close();
  }

  /** An inbox key's requests: a page of history and a read mark of the newest event on it. */
  askInbox(): void {
    if (!this.open) return;
    this.#ws?.send(
      JSON.stringify({ type: 'history', before: null, limit: 20, ref: `h${++this.#ref}` }),
    );
  }

  #later(fn: () => void, ms: number): void {
    const t = setTimeout(() => {
      this.#timers.delete(t);
      fn();
    }, ms);
    this.#timers.add(t);
  }

  #connect(): void {
    const { wsUrl, ca, apiKey, recipient, device } = this.opts;
    const q = new URLSearchParams({
      api_key: apiKey,
      recipient,
      client: 'mobile',
      device,
      batch: '1',
    });
    const ws = new WebSocket(`${wsUrl}/ws/connect?${q}`, ['herald.v1'], { ca });
    this.#ws = ws;
    ws.on('open', () => {
      this.opens++;
      if (this.opts.slow) this.#slowLoop(ws);
    });
    ws.on('message', (data) => this.#onFrame(ws, data.toString('utf8')));
    // A refused upgrade (the edge restarting, a connect-rate 429) ends in 'close' too.
    ws.on('error', () => {});
    ws.on('close', () => {
      if (this.#ws === ws) this.#ws = undefined;
      if (this.#held) this.#later(() => this.#held && !this.#ws && this.#connect(), backoffMs());
    });
  }

  #slowLoop(ws: WebSocket): void {
    const { pauseMs, everyMs } = this.opts.slow ?? { pauseMs: 0, everyMs: 0 };
    const raw = (ws as unknown as { _socket?: Socket })._socket;
    this.#later(() => {
      if (ws.readyState !== WebSocket.OPEN) return;
      raw?.pause();
      this.#later(() => {
        raw?.resume();
        this.#slowLoop(ws);
      }, pauseMs);
    }, everyMs);
  }

  #onFrame(ws: WebSocket, text: string): void {
    let f: { type?: string; id?: string; events?: Array<{ id: string }>; ref?: string };
    try {
      f = JSON.parse(text);
    } catch {
      this.badFrames++;
      return;
    }
    const { ledger, recipient } = this.opts;
    if (f.type === 'event' && f.id) {
      ledger.arrive(f.id, recipient);
      ws.send(JSON.stringify({ type: 'ack', id: f.id }));
    } else if (f.type === 'events' && f.events) {
      for (const e of f.events) ledger.arrive(e.id, recipient);
      ws.send(JSON.stringify({ type: 'ack', ids: f.events.map((e) => e.id) }));
    } else if (f.type === 'history' && f.ref) {
      this.inboxAnswers++;
      const newest = (f as { events?: Array<{ id: string }> }).events?.[0]?.id;
      if (newest) ws.send(JSON.stringify({ type: 'read', ids: [newest], ref: `r${++this.#ref}` }));
    } else if (f.type === 'inbox' && f.ref) {
      this.inboxAnswers++;
    } else if (f.type === 'error' && f.ref) {
      this.inboxErrors++;
    }
  }

  #close(): Promise<void> {
    const ws = this.#ws;
    if (!ws || ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      ws.once('close', () => resolve());
      // A socket still connecting, or one the edge does not answer: terminate it.
      if (ws.readyState === WebSocket.OPEN) ws.close(1000);
      else ws.terminate();
      setTimeout(() => ws.terminate(), 3000).unref();
    });
  }
}

import type { WebSocketConstructor } from '@herald/sdk';

/**
 * A scripted stand-in for a WebSocket, for the pure-logic unit tests only: it lets a test decide
 * exactly when a socket opens, what arrives and how it closes, under fake timers. Everything that
 * needs a real edge runs against the real stack in test/stack/.
 */
export class FakeSocket {
  readyState = 0;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  readonly sent: string[] = [];
  closedWith: number | undefined;

  constructor(
    readonly url: string,
    readonly protocols?: string | string[],
  ) {}

  send(data: string): void {
    if (this.readyState !== 1) throw new Error('not open');
    this.sent.push(data);
  }

  close(code = 1000): void {
    if (this.readyState >= 2) return;
    this.closedWith = code;
    this.readyState = 3;
  }

  /** The ids this socket acked, in order, those of list acks (`ids`) included. */
  acks(): string[] {
    return this.sent
      .map((s) => JSON.parse(s))
      .flatMap((f) => (f.type === 'ack' ? (f.ids ?? [f.id]) : []));
  }

  // What the edge would do:
  open(): void {
    this.readyState = 1;
    this.onopen?.({});
  }

  event(id: string, payload: unknown, ts = 1_700_000_000_000): void {
    this.onmessage?.({ data: JSON.stringify({ type: 'event', id, ts, payload }) });
  }

  /** An `events` frame (a `batch=1` socket): `[id, payload]` pairs, ts 1_700_000_000_000 + index. */
  events(events: Array<[string, unknown]>): void {
    const list = events.map(([id, payload], i) => ({ id, ts: 1_700_000_000_000 + i, payload }));
    this.onmessage?.({ data: JSON.stringify({ type: 'events', events: list }) });
  }

  raw(data: unknown): void {
    this.onmessage?.({ data });
  }

  /** An accepted socket refused at once: error frame, then close 4000+status with a JSON reason. */
  refuse(closeCode: number, code: string, message = `refused: ${code}`): void {
    this.open();
    this.raw(JSON.stringify({ type: 'error', error: { code, message, field: 'api_key' } }));
    this.serverClose(closeCode, JSON.stringify({ code }));
  }

  serverClose(code: number, reason = ''): void {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
}

/** A WebSocket constructor that records every socket it makes. */
export function fakeWebSocket(): {
  WebSocket: WebSocketConstructor;
  sockets: FakeSocket[];
  last(): FakeSocket;
} {
  const sockets: FakeSocket[] = [];
  class Ctor extends FakeSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols);
      sockets.push(this);
    }
  }
  return {
    WebSocket: Ctor,
    sockets,
    last() {
      const s = sockets.at(-1);
      if (!s) throw new Error('no socket was opened');
      return s;
    },
  };
}

import { SUBPROTOCOL } from '@herald/proto/wire';
import { retryDelay } from './backoff.js';
import { closeAction } from './close-action.js';
import { Outage } from './diagnose.js';
import { HeraldError } from './errors.js';
import { closeError, deliver, type ErrorDetail, parseFrame } from './frames.js';
import { Inbox } from './inbox.js';
import { Listeners } from './listeners.js';
import { reportListenerError } from './logger.js';
import type { Resolved } from './options.js';
import { RecentIds } from './recent-ids.js';
import { TokenSupply } from './token.js';
import type { ConnectionState, HeraldEvent } from './types.js';
import { closeQuietly, release, sendQuietly } from './websocket.js';
import type { WebSocketConstructor, WebSocketLike } from './websocket-like.js';

/**
 * - `connecting`: a socket is opening, or is open but not yet known to be accepted;
 * - `open`: accepted, events flow;
 * - `waiting`: a retry is scheduled;
 * - `stopped`: refused for good (4400, 4401, 4403) or no WebSocket, until every handle unsubscribed;
 * - `closed`: unsubscribed.
 */
type Phase = 'connecting' | 'open' | 'waiting' | 'stopped' | 'closed';

export interface ConnectionDeps {
  recipient: string;
  /** The full connect URL, but the token. It holds the API key: never log it. */
  url: string;
  options: Resolved;
  webSocket: () => Promise<WebSocketConstructor | undefined>;
  /** Called after every change of `connected`, so the instance can recompute its own state. */
  onStateChange: () => void;
  /** Called with every error also given to this connection's `errors` listeners. */
  onError: (error: HeraldError) => void;
  random: () => number;
}

/**
 * One recipient's socket in herald.v1 framing, `batch=1` (queued events may come several to a
 * frame): acks each frame after the listeners ran, drops redeliveries by id, and reconnects with
 * backoff until closed or refused for good. Shared by every subscription handle of that recipient
 * on one Herald instance.
 */
export class Connection {
  readonly events: Listeners<[unknown, HeraldEvent]>;
  readonly errors: Listeners<[HeraldError]>;
  readonly states: Listeners<[ConnectionState]>;
  readonly inbox: Inbox;
  readonly #deps: ConnectionDeps;
  readonly #recent: RecentIds;
  #phase: Phase = 'connecting';
  #ws: WebSocketLike | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #attempt = 0;
  #openedAt = 0;
  #refusal: ErrorDetail | undefined;
  #delivering = false;
  /** Why sockets fail, said once per outage. */
  readonly #outage = new Outage();
  /** options.getToken: a token before each connect, and fresh ones in-band before expiry. */
  readonly #tokens: TokenSupply | undefined;

  constructor(deps: ConnectionDeps) {
    this.#deps = deps;
    const onThrow = (err: unknown) => reportListenerError(deps.options.logger, err);
    this.events = new Listeners(onThrow);
    this.errors = new Listeners(onThrow);
    this.states = new Listeners(onThrow);
    this.#recent = new RecentIds(deps.options.dedupCapacity);
    this.inbox = new Inbox(
      (text) => this.#phase === 'open' && sendQuietly(this.#ws, text),
      onThrow,
    );
    const get = deps.options.getToken;
    this.#tokens = get ? new TokenSupply(get, deps.recipient) : undefined;
    void this.#connect();
  }

  get connected(): boolean {
    return this.#phase === 'open';
  }

  /** Retries now instead of waiting out the backoff (the network or the tab came back). */
  wake(): void {
    if (this.#phase !== 'waiting') return;
    this.#clearTimer();
    void this.#connect();
  }

  /** Closes the socket for good and forgets every listener. Idempotent. */
  close(): void {
    if (this.#phase === 'closed') return;
    const wasOpen = this.#phase === 'open';
    this.#phase = 'closed';
    this.#outage.abort();
    this.#clearTimer();
    this.#detach();
    this.events.clear();
    this.errors.clear();
    this.states.clear();
    this.inbox.counts.clear();
    if (wasOpen) this.#deps.onStateChange();
  }

  async #connect(): Promise<void> {
    this.#phase = 'connecting';
    this.#outage.failure = undefined;
    const Ctor = await this.#deps.webSocket();
    if (this.#phase !== 'connecting') return;
    if (!Ctor) {
      return this.#stop(
        new HeraldError(
          'websocket_unavailable',
          'No WebSocket in this runtime: pass options.WebSocket, or install the ws package (Node < 22)',
        ),
      );
    }
    let token: string | undefined;
    try {
      token = await this.#tokens?.next();
    } catch (err) {
      if (this.#phase === 'connecting') this.#lost('retry', err as HeraldError);
      return;
    }
    if (this.#phase !== 'connecting') return;
    let ws: WebSocketLike;
    try {
      const { url } = this.#deps;
      ws = new Ctor(token ? `${url}&token=${encodeURIComponent(token)}` : url, SUBPROTOCOL);
    } catch (err) {
      // A constructor that throws (a page's CSP, a mixed-content block) would throw again.
      return this.#stop(
        new HeraldError('websocket_unavailable', `WebSocket refused to open: ${String(err)}`),
      );
    }
    this.#ws = ws;
    this.#log('debug', 'herald: connecting');
    if (token) {
      this.#tokens?.schedule(
        token,
        (fresh) => this.#sendToken(ws, fresh),
        (e) => ws === this.#ws && this.#emitError(e),
      );
    }
    this.#timer = setTimeout(() => this.#lost('retry'), this.#deps.options.connectTimeoutMs);
    ws.onopen = () => {
      this.#clearTimer();
      this.#openedAt = Date.now();
      // A refusal is an accepted socket that gets an error frame and a 4xxx close right after it
      // opens. Browsers may dispatch those a few tasks after `open` (one event-loop turn was not
      // enough: Chromium and ws both showed refused sockets as connected), so the connection is up
      // only after acceptDelayMs without a refusal. An event frame proves acceptance at once.
      this.#timer = setTimeout(() => this.#accept(), this.#deps.options.acceptDelayMs);
    };
    ws.onmessage = (ev) => this.#onMessage(ws, ev.data);
    ws.onclose = (ev) => this.#onClose(ws, ev.code, ev.reason);
    // The close event follows an error and carries what is worth knowing, but for why a socket
    // never opened: Node's error event says that (an untrusted certificate, a refused port).
    ws.onerror = (ev) => {
      if (ws === this.#ws) this.#outage.failure = ev;
    };
  }

  #accept(): void {
    if (this.#phase !== 'connecting' || this.#refusal) return;
    this.#clearTimer();
    this.#phase = 'open';
    this.#outage.accepted();
    this.#log('debug', 'herald: connected');
    this.states.emit('connected');
    this.#deps.onStateChange();
  }

  #onMessage(ws: WebSocketLike, data: unknown): void {
    if (ws !== this.#ws) return;
    const frame = parseFrame(data);
    if (frame === undefined) {
      this.#log('warn', 'herald: skipped a frame that is not a herald.v1 envelope');
      return;
    }
    // An error with an inbox request's ref is its answer; without one, a refusal before a close.
    if (frame.type === 'error') {
      if (!this.inbox.answer(frame.error, frame.ref)) this.#refusal = frame.error;
      return;
    }
    if (frame.type === 'inbox') this.inbox.count(frame.unread, frame.ref); // before 'connected'
    if (this.#phase === 'connecting') this.#accept();
    if (frame.type === 'history')
      this.inbox.answer({ events: frame.events, next: frame.next }, frame.ref);
    if (frame.type !== 'event' && frame.type !== 'events') return;
    this.#delivering = true;
    const ack = deliver(frame, this.#recent, this.events, () => ws === this.#ws);
    this.#delivering = false;
    // Duplicates are acked again: the edge never saw the first ack (or the socket is going).
    sendQuietly(ws, ack);
    // A listener unsubscribed: the socket was left open for this ack, close it now.
    if (ws !== this.#ws) closeQuietly(ws);
  }

  #onClose(ws: WebSocketLike, code: number, reason: string): void {
    if (ws !== this.#ws) return;
    // Herald's own codes (4000 + HTTP status) come with an error frame or a JSON reason.
    const error = code >= 4000 && code < 5000 ? closeError(this.#refusal, code, reason) : undefined;
    this.#log('debug', 'herald: closed', { code });
    const neverOpened = this.#openedAt === 0;
    this.#lost(closeAction(code, error?.code), error);
    if (!error && neverOpened) void this.#diagnose();
  }

  /**
   * The socket failed before opening: find out whether the URL is wrong (stop, say so) or the
   * network is, or the answer cannot be read (keep retrying, say so once per outage). The retry
   * is already scheduled.
   */
  async #diagnose(): Promise<void> {
    const found = await this.#outage.explain(
      this.#deps.url,
      this.#deps.options.fetch,
      () => this.#phase === 'connecting' || this.#phase === 'waiting',
    );
    if (!found) return;
    if (found.stop) {
      this.#detach();
      this.#clearTimer();
      this.#stop(found.error);
      return;
    }
    this.#emitError(found.error);
  }

  #emitError(error: HeraldError): void {
    this.errors.emit(error);
    this.#deps.onError(error);
  }

  /** The socket is gone (closed, or never opened in time): tell, then retry or stop. */
  #lost(action: 'retry' | 'wait' | 'stop', error?: HeraldError): void {
    const wasOpen = this.#phase === 'open';
    this.#detach();
    this.#clearTimer();
    this.#refusal = undefined;
    if (this.#openedAt !== 0 && Date.now() - this.#openedAt >= this.#deps.options.backoff.stableMs)
      this.#attempt = 0;
    this.#openedAt = 0;
    this.#phase = action === 'stop' ? 'stopped' : 'waiting';
    if (wasOpen) {
      this.states.emit('disconnected');
      this.#deps.onStateChange();
    }
    if (action === 'stop') {
      this.#stop(error ?? new HeraldError('unexpected_response', 'socket refused'));
      return;
    }
    if (error) this.#emitError(error);
    // A listener may have unsubscribed, or the network may be back already (wake).
    if (this.#phase !== 'waiting' || this.#timer !== undefined) return;
    const delay = retryDelay(this.#attempt++, this.#deps.options.backoff, this.#deps.random, error);
    this.#log('debug', 'herald: reconnecting', { delayMs: delay });
    this.#timer = setTimeout(() => void this.#connect(), delay);
  }

  #stop(error: HeraldError): void {
    this.#phase = 'stopped';
    this.#log('warn', 'herald: not reconnecting', { code: error.code, closeCode: error.closeCode });
    this.#emitError(error);
  }

  /** Lets go of the current socket so none of its events reach us again, and closes it. */
  #detach(): void {
    this.#tokens?.cancel();
    this.inbox.drop();
    const ws = this.#ws;
    if (!ws) return;
    this.#ws = undefined;
    // A listener that unsubscribes still gets its event acked: #onMessage closes the socket after.
    release(ws, this.#delivering);
  }

  /** A fresh recipient token, in-band; false when this socket is no longer the one to take it. */
  #sendToken(ws: WebSocketLike, token: string): boolean {
    return ws === this.#ws && sendQuietly(ws, JSON.stringify({ type: 'token', token }));
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #log(level: 'debug' | 'warn', message: string, extra: Record<string, unknown> = {}): void {
    this.#deps.options.logger?.[level]?.(message, { recipient: this.#deps.recipient, ...extra });
  }
}

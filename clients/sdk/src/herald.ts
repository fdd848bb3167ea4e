import { CONNECT_PATH, isUuidV4 } from '@herald/proto/wire';
import { Connection } from './connection.js';
import type { HeraldError } from './errors.js';
import { Listeners } from './listeners.js';
import { reportListenerError } from './logger.js';
import { notify } from './notify.js';
import { notifyMany } from './notify-many.js';
import { type HeraldOptions, type Resolved, resolveOptions } from './options.js';
import { SubscriptionHandle } from './subscription.js';
import type {
  ConnectionListener,
  ConnectionState,
  ErrorListener,
  NotifyEvent,
  NotifyInput,
  NotifyManyOptions,
  NotifyResult,
  Subscription,
  Unsubscribe,
} from './types.js';
import { watchWake } from './wake.js';
import { resolveWebSocket, type WebSocketConstructor } from './websocket.js';

type Handle = Pick<Subscription, 'unsubscribe'>;

/**
 * A Herald client: subscribe to recipients' events over WebSockets and dispatch events over
 * HTTP. Instances are independent; each subscribed recipient gets one socket.
 */
export class Herald {
  readonly #options: Resolved;
  readonly #connections = new Map<string, { connection: Connection; handles: Set<Handle> }>();
  readonly #states: Listeners<[ConnectionState]>;
  readonly #errors: Listeners<[HeraldError]>;
  #connected = false;
  #webSocket: Promise<WebSocketConstructor | undefined> | undefined;
  #unwatch: (() => void) | undefined;

  /** Throws a TypeError naming the first bad option. Opens nothing until `subscribe`. */
  constructor(options: HeraldOptions) {
    this.#options = resolveOptions(options);
    this.#states = new Listeners((err) => reportListenerError(this.#options.logger, err));
    this.#errors = new Listeners((err) => reportListenerError(this.#options.logger, err));
  }

  /**
   * Opens (or shares) the socket of `recipient`, a UUID v4, and returns a handle to listen on.
   * `TPayload` types the payloads; the SDK does not check them.
   */
  subscribe<TPayload = unknown>(recipient: string): Subscription<TPayload> {
    if (!isUuidV4(recipient)) {
      throw new TypeError(
        'Herald: subscribe(recipient) needs a UUID v4 (xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx, y in 8,9,a,b)',
      );
    }
    const id = recipient.toLowerCase();
    let entry = this.#connections.get(id);
    if (!entry) {
      const { wsUrl, apiKey, client, device } = this.#options;
      // batch=1: this SDK reads `events` frames (frames.ts), so a drain takes fewer frames and acks.
      const query = new URLSearchParams({ api_key: apiKey, recipient: id, client, batch: '1' });
      if (device) query.set('device', device);
      entry = {
        connection: new Connection({
          recipient: id,
          url: `${wsUrl}${CONNECT_PATH}?${query}`,
          options: this.#options,
          webSocket: () => {
            this.#webSocket ??= resolveWebSocket(this.#options.WebSocket);
            return this.#webSocket;
          },
          onStateChange: () => this.#recompute(),
          onError: (error) => this.#errors.emit(error),
          random: () => Math.random(),
        }),
        handles: new Set(),
      };
      this.#connections.set(id, entry);
      this.#unwatch ??= watchWake(() => {
        for (const e of this.#connections.values()) e.connection.wake();
      });
    }
    const sub: Subscription<TPayload> = new SubscriptionHandle(id, entry.connection, () =>
      this.#release(id, sub),
    );
    entry.handles.add(sub);
    return sub;
  }

  /** `state` is `'connected'` while at least one subscription's socket is open and accepted. */
  onConnectionChange(listener: ConnectionListener): Unsubscribe {
    return this.#states.add(listener);
  }

  connected(): boolean {
    return this.#connected;
  }

  /**
   * Every socket error of every subscription, typed by `error.kind`: `wrong_endpoint` (a
   * misconfigured `wsUrl`; stops), `refused` (4400/4401/4403 stop; 4429 waits), `unavailable`
   * and `network` (retried with backoff; `network` once per outage).
   */
  onError(listener: ErrorListener): Unsubscribe {
    return this.#errors.add(listener);
  }

  /** Dispatches one event. Resolves for every server outcome; rejects only for a bad call. */
  notify(input: NotifyInput): Promise<NotifyResult> {
    return notify(this.#options, input);
  }

  /**
   * Dispatches many events in one request (`POST /notify/batch`): one result per event, in order,
   * with `notify`'s statuses. A refused request fails every event with its error; rejects only for
   * a bad call.
   */
  notifyMany(events: readonly NotifyEvent[], opts?: NotifyManyOptions): Promise<NotifyResult[]> {
    return notifyMany(this.#options, events, opts);
  }

  /**
   * Closes every socket and stops reconnecting: every subscription is unsubscribed and no timer is
   * left. Idempotent; `subscribe` afterwards starts afresh.
   */
  disconnect(): void {
    for (const { handles } of [...this.#connections.values()]) {
      for (const sub of [...handles]) sub.unsubscribe();
    }
  }

  #release(id: string, sub: Handle): void {
    const entry = this.#connections.get(id);
    if (!entry?.handles.delete(sub) || entry.handles.size > 0) return;
    this.#connections.delete(id);
    entry.connection.close();
    if (this.#connections.size === 0) {
      this.#unwatch?.();
      this.#unwatch = undefined;
    }
    this.#recompute();
  }

  #recompute(): void {
    let now = false;
    for (const { connection } of this.#connections.values()) now ||= connection.connected;
    if (now === this.#connected) return;
    this.#connected = now;
    this.#states.emit(now ? 'connected' : 'disconnected');
  }
}

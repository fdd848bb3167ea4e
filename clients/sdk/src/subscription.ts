import type { Connection } from './connection.js';
import type {
  ConnectionListener,
  ErrorListener,
  EventListener,
  HistoryOptions,
  HistoryPage,
  Subscription,
  Unsubscribe,
} from './types.js';

/** One `subscribe()` call's handle on a recipient's shared {@link Connection}. */
export class SubscriptionHandle<TPayload = unknown> implements Subscription<TPayload> {
  readonly recipient: string;
  readonly #connection: Connection;
  readonly #release: () => void;
  readonly #offs = new Set<Unsubscribe>();
  #active = true;

  constructor(recipient: string, connection: Connection, release: () => void) {
    this.recipient = recipient;
    this.#connection = connection;
    this.#release = release;
  }

  listen(listener: EventListener<TPayload>): Unsubscribe {
    return this.#track(this.#connection.events.add(listener as EventListener));
  }

  onError(listener: ErrorListener): Unsubscribe {
    return this.#track(this.#connection.errors.add(listener));
  }

  onConnectionChange(listener: ConnectionListener): Unsubscribe {
    return this.#track(this.#connection.states.add(listener));
  }

  connected(): boolean {
    return this.#active && this.#connection.connected;
  }

  onInbox(listener: (unread: number) => void): Unsubscribe {
    return this.#track(this.#connection.inbox.counts.add(listener));
  }

  unread(): number | undefined {
    return this.#connection.inbox.unread;
  }

  markRead(ids: readonly string[]): Promise<number> {
    return this.#connection.inbox.read(ids);
  }

  markAllRead(): Promise<number> {
    return this.#connection.inbox.read(true);
  }

  history(options?: HistoryOptions): Promise<HistoryPage<TPayload>> {
    return this.#connection.inbox.history(options) as Promise<HistoryPage<TPayload>>;
  }

  unsubscribe(): void {
    if (!this.#active) return;
    this.#active = false;
    for (const off of this.#offs) off();
    this.#offs.clear();
    this.#release();
  }

  #track(off: Unsubscribe): Unsubscribe {
    if (!this.#active) {
      off();
      return off;
    }
    this.#offs.add(off);
    return () => {
      off();
      this.#offs.delete(off);
    };
  }
}

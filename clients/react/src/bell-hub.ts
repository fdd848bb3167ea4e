import { type ConnectionState, Herald, HeraldError, type HeraldEvent } from '@herald/sdk';
import { type InboxOp, InboxRelay, type InboxResult } from './inbox-relay.js';
import { runForLeader } from './leader.js';
import { type BellState, PersistedState, SEEN_CAPACITY, safeGet, safeSet } from './persisted.js';
import { Ringer } from './ringer.js';
import type { BellItem } from './types.js';

export interface HubConfig {
  apikey: string;
  userID: string;
  baseUrl: string | undefined;
  wsUrl: string | undefined;
  /** The bell's token or getToken, read when the SDK asks; undefined for a key without tokens. */
  getToken?: (() => Promise<string>) | undefined;
}

/** What the bell renders; a new object on every change, the same one otherwise. */
export interface Snapshot {
  state: BellState;
  connection: ConnectionState;
}

type NewListener = (items: BellItem[], events: HeraldEvent[]) => void;

/** Versioned, so a future format can ignore this one's leftovers. */
const PREFIX = 'herald.bell.v1';
export const DEFAULT_MAX_ITEMS = 50;
export const DEFAULT_SOUND_URL = '/ring.mp3';

/**
 * One tab's side of a user's bell. Tabs elect a leader; only the leader holds a Herald socket.
 * Each event is written to localStorage (deduplicated by id) before the SDK acks it, so when the
 * leader tab closes before acking, the next leader's socket gets it again and the id is already
 * known: no loss, no duplicate. Followers learn of events, reads and the connection state through
 * `storage` events. Shared by every bell of the same user and key in the tab (reference counted).
 */
export class BellHub {
  readonly ringer = new Ringer(DEFAULT_SOUND_URL);
  maxItems = DEFAULT_MAX_ITEMS;
  readonly #config: HubConfig;
  readonly #store: PersistedState;
  readonly #connectionKey: string;
  readonly #listeners = new Set<() => void>();
  readonly #newListeners = new Set<NewListener>();
  readonly #errorListeners = new Set<(error: HeraldError) => void>();
  /** Ids this tab has already shown as new, oldest first; bounded by #remember. */
  readonly #known = new Set<string>();
  /** Why this tab could not open its socket (a bad userID or URL), told to bells that come later. */
  #failure: HeraldError | undefined;
  #snapshot: Snapshot;
  #leading = false;
  #resign: (() => void) | undefined;
  #relay: InboxRelay | undefined;

  constructor(config: HubConfig) {
    this.#config = config;
    const user = config.userID.toLowerCase();
    this.#store = new PersistedState(`${PREFIX}:${user}`);
    this.#connectionKey = `${PREFIX}:${user}:connection`;
    const state = this.#store.read();
    for (const item of state.items) this.#remember(item.id);
    this.#snapshot = { state, connection: this.#storedConnection() };
  }

  /** Joins the election; the tab that wins opens the socket. Called once, from an effect. */
  start(): void {
    globalThis.addEventListener?.('storage', this.#onStorage);
    const { apikey, wsUrl, userID } = this.#config;
    // One leader per socket: tabs of the same user with different keys each need their own.
    const name = `${PREFIX}:${wsUrl ?? ''}:${userID.toLowerCase()}:${keyTag(apikey)}`;
    this.#relay = new InboxRelay(`${name}:inbox`);
    this.#resign = runForLeader(name, () => this.#lead());
  }

  dispose(): void {
    globalThis.removeEventListener?.('storage', this.#onStorage);
    this.#resign?.();
    this.#resign = undefined;
    this.#relay?.close();
    this.ringer.dispose();
  }

  get leading(): boolean {
    return this.#leading;
  }

  /** How many ids this tab remembers having shown (bounded; a test reads it). */
  get rememberedIds(): number {
    return this.#known.size;
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  readonly getSnapshot = (): Snapshot => this.#snapshot;

  onNew(listener: NewListener): () => void {
    this.#newListeners.add(listener);
    return () => this.#newListeners.delete(listener);
  }

  onError(listener: (error: HeraldError) => void): () => void {
    this.#errorListeners.add(listener);
    // The socket fails as the hub starts, before a bell's effect subscribes: tell late comers. A
    // microtask later, so StrictMode's subscribe, unsubscribe, subscribe again reports it once.
    const failure = this.#failure;
    if (failure) {
      queueMicrotask(() => {
        if (this.#errorListeners.has(listener)) listener(failure);
      });
    }
    return () => this.#errorListeners.delete(listener);
  }

  /**
   * Opening the dropdown reads everything, in every tab; with an inbox key on the server too, so
   * on every device (the server's next count confirms it).
   */
  markRead(): void {
    this.#store.markRead();
    this.#refresh({ state: this.#store.read() });
    if (this.#snapshot.state.inbox) this.inbox({ read: true }).catch(() => {});
  }

  /** Inbox mode: a history page or read marks, through this tab's socket or the leader's. */
  inbox(op: InboxOp): Promise<InboxResult> {
    return this.#relay?.run(op) ?? Promise.reject(new TypeError('Herald: the hub is not started'));
  }

  #lead(): () => void {
    this.#leading = true;
    // Whatever a previous leader left in storage (a closed tab writes nothing), this tab's socket
    // is not up yet: red until the SDK says connected.
    this.#setConnection('disconnected');
    this.#failure = undefined;
    let herald: Herald | undefined;
    try {
      const { apikey, userID, baseUrl, wsUrl, getToken } = this.#config;
      herald = new Herald({ apiKey: apikey, client: 'web', baseUrl, wsUrl, getToken });
      herald.onConnectionChange((state) => this.#setConnection(state));
      herald.onError((error) => this.#report(error));
      const sub = herald.subscribe(userID);
      sub.listen((_payload, event) => this.#receive(event));
      // An inbox key's server sends the count before anything else: none by then, a plain key.
      sub.onInbox((n) => this.#count(n, true));
      sub.onConnectionChange((s) => {
        if (s === 'connected' && sub.unread() === undefined) this.#count(0, false);
      });
      this.#relay?.serve(sub);
    } catch (err) {
      // A bad userID or URL: the bell stays red and says why, it never breaks the page.
      console.error(err);
      this.#failure = setupError(err, herald !== undefined);
      this.#report(this.#failure);
    }
    return () => {
      this.#relay?.serve(undefined);
      herald?.disconnect();
      this.#leading = false;
      this.#setConnection('disconnected');
    };
  }

  /** The server's count (inbox), or none: a plain key, whose count stays local. */
  #count(unread: number, inbox: boolean): void {
    const state = this.#store.read();
    if (!inbox && !state.inbox) return;
    this.#store.count(inbox ? unread : state.unread, inbox || undefined);
    this.#refresh({ state: this.#store.read() });
  }

  #report(error: HeraldError): void {
    for (const l of this.#errorListeners) l(error);
  }

  #receive(event: HeraldEvent): void {
    const item: BellItem = { id: event.id, ts: event.ts, data: event.payload };
    if (event.topic !== undefined) item.topic = event.topic;
    const fresh = this.#store.add([item], this.maxItems);
    if (fresh.length === 0) return;
    this.#refresh({ state: this.#store.read() });
    this.ringer.ring();
    this.#announce(fresh);
  }

  readonly #onStorage = (ev: StorageEvent): void => {
    if (ev.key === this.#connectionKey && !this.#leading) {
      this.#refresh({ connection: this.#storedConnection() });
    } else if (ev.key === this.#store.key || ev.key === null) {
      const state = this.#store.read();
      this.#refresh({ state });
      this.#announce(state.items.filter((i) => !this.#known.has(i.id)).reverse());
    }
  };

  #announce(items: BellItem[]): void {
    const fresh = items.filter((i) => !this.#known.has(i.id));
    if (fresh.length === 0) return;
    for (const i of fresh) this.#remember(i.id);
    const events = fresh.map((i) => ({ id: i.id, ts: i.ts, topic: i.topic, payload: i.data }));
    for (const l of this.#newListeners) l(fresh, events);
  }

  /**
   * Remembers an id as shown, forgetting the oldest beyond as many as the stored `seen` list keeps
   * (or the dropdown lists, if more), so a tab open for weeks stays flat. The stored items are the
   * newest maxItems, so an id forgotten here has left them and no storage event shows it again.
   */
  #remember(id: string): void {
    this.#known.add(id);
    const capacity = Math.max(SEEN_CAPACITY, this.maxItems);
    for (const oldest of this.#known) {
      if (this.#known.size <= capacity) break;
      this.#known.delete(oldest);
    }
  }

  #setConnection(connection: ConnectionState): void {
    safeSet(this.#connectionKey, connection);
    this.#refresh({ connection });
  }

  #storedConnection(): ConnectionState {
    return safeGet(this.#connectionKey) === 'connected' && !this.#leading
      ? 'connected'
      : 'disconnected';
  }

  #refresh(change: Partial<Snapshot>): void {
    const next = { ...this.#snapshot, ...change };
    if (next.state === this.#snapshot.state && next.connection === this.#snapshot.connection) {
      return;
    }
    this.#snapshot = next;
    for (const l of this.#listeners) l();
  }
}

/**
 * A bad option (`new Herald` threw) or a bad userID (`subscribe` threw), typed like the SDK's own
 * errors so one `onError` handles both; the SDK's message says what to fix.
 */
function setupError(err: unknown, constructed: boolean): HeraldError {
  if (err instanceof HeraldError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return constructed
    ? new HeraldError('invalid_recipient', message, { field: 'userID' })
    : new HeraldError('invalid_field', message);
}

/**
 * A short tag of the key for lock and channel names: any script of the origin can list those
 * (`navigator.locks.query()`), so they never carry the key itself. FNV-1a, 32 bits: it only has
 * to tell apart the few keys one origin uses.
 */
function keyTag(apikey: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < apikey.length; i++) {
    h ^= apikey.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(36);
}

import { type ConnectionState, Herald, type HeraldError, type HeraldEvent } from '@herald/sdk';
import { runForLeader } from './leader.js';
import { type BellState, PersistedState, safeGet, safeSet } from './persisted.js';
import { Ringer } from './ringer.js';
import type { BellItem } from './types.js';

export interface HubConfig {
  apikey: string;
  userID: string;
  baseUrl: string | undefined;
  wsUrl: string | undefined;
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
  /** Ids this tab has already shown as new. */
  readonly #known = new Set<string>();
  #snapshot: Snapshot;
  #leading = false;
  #resign: (() => void) | undefined;

  constructor(config: HubConfig) {
    this.#config = config;
    const user = config.userID.toLowerCase();
    this.#store = new PersistedState(`${PREFIX}:${user}`);
    this.#connectionKey = `${PREFIX}:${user}:connection`;
    const state = this.#store.read();
    for (const item of state.items) this.#known.add(item.id);
    this.#snapshot = { state, connection: this.#storedConnection() };
  }

  /** Joins the election; the tab that wins opens the socket. Called once, from an effect. */
  start(): void {
    globalThis.addEventListener?.('storage', this.#onStorage);
    const { wsUrl, userID } = this.#config;
    this.#resign = runForLeader(`${PREFIX}:${wsUrl ?? ''}:${userID.toLowerCase()}`, () =>
      this.#lead(),
    );
  }

  dispose(): void {
    globalThis.removeEventListener?.('storage', this.#onStorage);
    this.#resign?.();
    this.#resign = undefined;
    this.ringer.dispose();
  }

  get leading(): boolean {
    return this.#leading;
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
    return () => this.#errorListeners.delete(listener);
  }

  /** Opening the dropdown reads everything, in every tab. */
  markRead(): void {
    this.#store.markRead();
    this.#refresh({ state: this.#store.read() });
  }

  #lead(): () => void {
    this.#leading = true;
    // Whatever a previous leader left in storage (a closed tab writes nothing), this tab's socket
    // is not up yet: red until the SDK says connected.
    this.#setConnection('disconnected');
    let herald: Herald | undefined;
    try {
      const { apikey, userID, baseUrl, wsUrl } = this.#config;
      herald = new Herald({ apiKey: apikey, client: 'web', baseUrl, wsUrl });
      herald.onConnectionChange((state) => this.#setConnection(state));
      herald.onError((error) => {
        for (const l of this.#errorListeners) l(error);
      });
      herald.subscribe(userID).listen((_payload, event) => this.#receive(event));
    } catch (err) {
      // A bad userID or URL: the bell stays red and says why, it never breaks the page.
      console.error(err);
    }
    return () => {
      herald?.disconnect();
      this.#leading = false;
      this.#setConnection('disconnected');
    };
  }

  #receive(event: HeraldEvent): void {
    const item: BellItem = { id: event.id, ts: event.ts, data: event.payload };
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
    for (const i of fresh) this.#known.add(i.id);
    const events = fresh.map((i) => ({ id: i.id, ts: i.ts, payload: i.data }));
    for (const l of this.#newListeners) l(fresh, events);
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

const hubs = new Map<
  string,
  { hub: BellHub; refs: number; disposal?: ReturnType<typeof setTimeout> }
>();

/**
 * The tab's hub for this user and key, shared by every bell that asks. Releasing the last
 * reference disposes it after the current task, so React StrictMode's unmount-and-remount (and a
 * bell moving in the tree) keeps the one socket instead of closing and reopening it.
 */
export function acquireHub(config: HubConfig): { hub: BellHub; release: () => void } {
  const id = JSON.stringify([config.apikey, config.userID, config.baseUrl, config.wsUrl]);
  let entry = hubs.get(id);
  if (!entry) {
    const hub = new BellHub(config);
    entry = { hub, refs: 0 };
    hubs.set(id, entry);
    hub.start();
  }
  const held = entry;
  if (held.disposal !== undefined) clearTimeout(held.disposal);
  held.disposal = undefined;
  held.refs++;
  let released = false;
  return {
    hub: held.hub,
    release: () => {
      if (released) return;
      released = true;
      if (--held.refs > 0) return;
      held.disposal = setTimeout(() => {
        if (held.refs > 0) return;
        hubs.delete(id);
        held.hub.dispose();
      }, 0);
    },
  };
}

import type { BellItem } from './types.js';

/** What a user's bell keeps in localStorage, shared by every tab of the origin. */
export interface BellState {
  /** Newest first, at most maxItems. */
  items: BellItem[];
  /** Events since the dropdown was last opened (may exceed items.length). */
  unread: number;
  /** Recent event ids, so a redelivery (after a leader tab closed) is never counted twice. */
  seen: string[];
  /** Inbox mode: `unread` is the server's count, the same on every device. */
  inbox?: boolean;
}

/** How many ids are remembered for deduplication across tabs and reloads. */
export const SEEN_CAPACITY = 500;

export const EMPTY_STATE: BellState = /* @__PURE__ */ Object.freeze({
  items: [],
  unread: 0,
  seen: [],
}) as BellState;

/**
 * A user's bell state in localStorage (in memory when storage is unavailable: private mode,
 * blocked cookies). Every write is a read-modify-write of the stored value, so tabs that write in
 * turn do not undo each other; other tabs learn of it through the `storage` event.
 */
export class PersistedState {
  readonly key: string;
  #memory: BellState = EMPTY_STATE;

  constructor(key: string) {
    this.key = key;
  }

  read(): BellState {
    const raw = safeGet(this.key);
    if (raw === undefined) return this.#memory;
    if (raw === null) return EMPTY_STATE;
    return parse(raw) ?? EMPTY_STATE;
  }

  /**
   * Adds the events not seen before (newest first); returns the ones that were new. In inbox mode
   * the server counts them (its next count follows), so `unread` stays.
   */
  add(events: BellItem[], maxItems: number): BellItem[] {
    const state = this.read();
    const seen = new Set(state.seen);
    const fresh: BellItem[] = [];
    for (const e of events) {
      if (seen.has(e.id)) continue;
      seen.add(e.id);
      fresh.push(e);
    }
    if (fresh.length === 0) return fresh;
    this.#write({
      items: [...fresh.slice().reverse(), ...state.items].slice(0, maxItems),
      unread: state.unread + (state.inbox ? 0 : fresh.length),
      seen: [...state.seen, ...fresh.map((e) => e.id)].slice(-SEEN_CAPACITY),
      inbox: state.inbox,
    });
    return fresh;
  }

  markRead(): void {
    this.count(0, this.read().inbox);
  }

  /** Sets the unread count: the server's (`inbox`), or the local one. */
  count(unread: number, inbox: boolean | undefined): void {
    const state = this.read();
    if (state.unread === unread && state.inbox === inbox) return;
    this.#write({ ...state, unread, inbox });
  }

  #write(state: BellState): void {
    this.#memory = state;
    safeSet(this.key, JSON.stringify(state));
  }
}

function parse(raw: string): BellState | undefined {
  try {
    const v = JSON.parse(raw) as Partial<BellState>;
    if (!Array.isArray(v.items) || typeof v.unread !== 'number' || !Array.isArray(v.seen)) {
      return undefined;
    }
    return { items: v.items, unread: v.unread, seen: v.seen, inbox: v.inbox === true || undefined };
  } catch {
    return undefined;
  }
}

/** The stored string, null when absent, undefined when storage cannot be used at all. */
export function safeGet(key: string): string | null | undefined {
  try {
    return globalThis.localStorage.getItem(key);
  } catch {
    return undefined;
  }
}

export function safeSet(key: string, value: string): void {
  try {
    globalThis.localStorage.setItem(key, value);
  } catch {
    // Storage full or blocked: this tab keeps its state in memory.
  }
}

import type { Delivery } from '../socket/delivery.js';
import type { EventFrames, Framing } from '../socket/framing.js';

/** How a feed knows an event: its position in the source, or its id. */
export type FeedKey = number | string;

/** One event handed to the socket in this session, by whichever path came first. */
export interface Entry {
  proven: boolean;
  lost: boolean;
  /** Deliveries (live or drain) of the same event following this write's outcome. */
  waiters: Delivery[];
  /** Not written yet: held while the catch-up is behind it, so the device gets its events in order. */
  held?: EventFrames | undefined;
}

export function newEntry(waiter?: Delivery): Entry {
  return { proven: false, lost: false, waiters: waiter ? [waiter] : [] };
}

/** A copy of an event the device already proved: it hears so at once, without a write. */
export function provenAtOnce(delivery: Delivery, device: string): void {
  queueMicrotask(() => {
    delivery.written();
    delivery.proven(device);
  });
}

/**
 * The events a feed handed its socket, by key, so each is written once in the session; and the
 * copies it holds unwritten (counted, so what waits for a stalled catch-up stays bounded). Made at
 * the first event: most device sockets never get one.
 */
export class FeedEntries {
  readonly #framing: Framing;
  /** Proven entries beyond this many are forgotten, oldest first; undefined: kept until forgotten. */
  readonly #cap: number | undefined;
  /** Insertion ordered. */
  #map: Map<FeedKey, Entry> | undefined;
  #heldEvents = 0;
  #heldBytes = 0;

  constructor(framing: Framing, cap: number | undefined) {
    this.#framing = framing;
    this.#cap = cap;
  }

  get(key: FeedKey): Entry | undefined {
    return this.#map?.get(key);
  }

  /** Remembers an entry; past the cap the oldest proven are forgotten (unproven ones are bounded by the socket's caps). */
  remember(key: FeedKey, entry: Entry): void {
    this.#map ??= new Map();
    const map = this.#map;
    map.set(key, entry);
    const cap = this.#cap;
    if (cap === undefined || map.size <= cap) return;
    for (const [old, e] of map) {
      if (map.size <= cap) break;
      if (e.proven) map.delete(old);
    }
  }

  forget(key: FeedKey): void {
    this.#map?.delete(key);
  }

  /** Holds a copy unwritten; false when `max` (events, bytes held) leaves no room for it. */
  hold(
    key: FeedKey,
    frames: EventFrames,
    delivery: Delivery,
    max: { events: number; bytes: number } | undefined,
  ): boolean {
    const bytes = frames.frameFor(this.#framing).bytes;
    if (max && (this.#heldEvents >= max.events || this.#heldBytes + bytes > max.bytes))
      return false;
    this.#heldEvents++;
    this.#heldBytes += bytes;
    const entry = newEntry(delivery);
    entry.held = frames;
    this.remember(key, entry);
    return true;
  }

  /** Takes a held entry's frames for its write. */
  release(entry: Entry): EventFrames {
    const frames = entry.held as EventFrames;
    entry.held = undefined;
    this.#heldEvents--;
    this.#heldBytes -= frames.frameFor(this.#framing).bytes;
    return frames;
  }

  /** The entry's write can no longer happen or be proven: its deliveries are lost. */
  fail(entry: Entry): void {
    if (entry.held) this.release(entry);
    entry.lost = true;
    const waiters = entry.waiters;
    entry.waiters = [];
    for (const d of waiters) d.lost();
  }

  /** The held entries: by key (positions, ascending) or in arrival order. */
  held(byKey: boolean): Entry[] {
    const held = [...(this.#map ?? [])].filter(([, e]) => e.held);
    if (byKey) held.sort(([a], [b]) => (a as number) - (b as number));
    return held.map(([, e]) => e);
  }

  /** Held copies at positions up to `floor`, which `device` proved already: proven, not written. */
  proveHeldUpTo(floor: number, device: string): void {
    for (const [key, entry] of this.#map ?? []) {
      if (!entry.held || (key as number) > floor) continue;
      this.release(entry);
      entry.proven = true;
      for (const d of entry.waiters) provenAtOnce(d, device);
      entry.waiters = [];
      this.forget(key);
    }
  }
}

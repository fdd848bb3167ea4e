import type { Unsubscribe } from './types.js';

/**
 * A listener list where each `add` is its own entry (adding one function twice needs two
 * removals) and a throwing listener neither stops the others nor the caller.
 */
export class Listeners<A extends unknown[]> {
  readonly #set = new Set<(...args: A) => void>();
  readonly #onThrow: (err: unknown) => void;

  constructor(onThrow: (err: unknown) => void) {
    this.#onThrow = onThrow;
  }

  add(fn: (...args: A) => void): Unsubscribe {
    if (typeof fn !== 'function') {
      throw new TypeError(`Herald: a listener must be a function, got ${typeof fn}`);
    }
    const entry = (...args: A) => fn(...args);
    this.#set.add(entry);
    return () => {
      this.#set.delete(entry);
    };
  }

  emit(...args: A): void {
    // A snapshot, so a listener that removes itself (or another) does not skip one.
    for (const fn of [...this.#set]) {
      try {
        fn(...args);
      } catch (err) {
        this.#onThrow(err);
      }
    }
  }

  clear(): void {
    this.#set.clear();
  }
}

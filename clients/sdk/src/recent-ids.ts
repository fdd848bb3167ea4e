/**
 * The ids of the last `capacity` events, oldest evicted first. A redelivery (after a reconnect,
 * or an ack lost with its socket) comes soon after the original, so a bounded window is enough
 * and keeps memory flat on a long-lived page.
 */
export class RecentIds {
  readonly #ids = new Set<string>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  has(id: string): boolean {
    return this.#ids.has(id);
  }

  add(id: string): void {
    this.#ids.add(id);
    if (this.#ids.size > this.#capacity) {
      const oldest = this.#ids.values().next().value;
      if (oldest !== undefined) this.#ids.delete(oldest);
    }
  }
}

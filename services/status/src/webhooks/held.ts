import type { ClaimedMessage } from './claim.js';

interface Held {
  message: ClaimedMessage;
  /** Epoch ms past which it is released unsent rather than started (its lease would run short). */
  releaseAt: number;
}

/**
 * The messages a sender claimed and has not started, per endpoint, and its requests in flight per
 * endpoint. {@link next} hands them out round robin over the endpoints, at most `perEndpoint`
 * in flight to each, so an endpoint with a long backlog or slow answers never holds the others'
 * turn; one held past its `releaseAt` is handed to `expired` instead (released, due at once).
 */
export class HeldMessages {
  readonly #queues = new Map<string, Held[]>();
  readonly #active = new Map<string, number>();
  #size = 0;

  /** Messages held, not started. */
  get size(): number {
    return this.#size;
  }

  add(message: ClaimedMessage, releaseAt: number): void {
    const q = this.#queues.get(message.endpoint_id);
    if (q) q.push({ message, releaseAt });
    else this.#queues.set(message.endpoint_id, [{ message, releaseAt }]);
    this.#size++;
  }

  /** The next message to start, counted in flight until {@link finished}; none when all wait. */
  next(
    perEndpoint: number,
    now: number,
    expired: (m: ClaimedMessage) => void,
  ): ClaimedMessage | undefined {
    for (const [endpoint, q] of this.#queues) {
      const active = this.#active.get(endpoint) ?? 0;
      if (active >= perEndpoint) continue;
      this.#dropExpired(q, now, expired);
      const h = q.shift();
      this.#queues.delete(endpoint);
      if (!h) continue;
      // Back of the line: the next call starts with another endpoint.
      if (q.length > 0) this.#queues.set(endpoint, q);
      this.#size--;
      this.#active.set(endpoint, active + 1);
      return h.message;
    }
    return undefined;
  }

  /** A request started by {@link next} ended. */
  finished(endpoint: string): void {
    const n = (this.#active.get(endpoint) ?? 1) - 1;
    if (n > 0) this.#active.set(endpoint, n);
    else this.#active.delete(endpoint);
  }

  /** Hands every message held past its time to `expired` (those of endpoints at their cap too). */
  sweep(now: number, expired: (m: ClaimedMessage) => void): void {
    for (const [endpoint, q] of this.#queues) {
      this.#dropExpired(q, now, expired);
      if (q.length === 0) this.#queues.delete(endpoint);
    }
  }

  /** Takes every held message out (shutdown: they are released for another sender). */
  takeAll(): ClaimedMessage[] {
    const all = [...this.#queues.values()].flat().map((h) => h.message);
    this.#queues.clear();
    this.#size = 0;
    return all;
  }

  #dropExpired(q: Held[], now: number, expired: (m: ClaimedMessage) => void): void {
    while (q.length > 0 && (q[0] as Held).releaseAt <= now) {
      expired((q.shift() as Held).message);
      this.#size--;
    }
  }
}

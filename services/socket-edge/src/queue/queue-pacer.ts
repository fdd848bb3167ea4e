import type { JsMsg } from 'nats';

/** While deliveries wait for room: how often room is looked for besides settlements, ms. */
const PACE_POLL_MS = 50;

/**
 * Holds queued deliveries, in stream order, while the recipient's sockets have no room for them
 * (their unproven events or bytes are over half their caps: a reader slower than the drain), and
 * writes them as room comes back. Bounded by the consumer's max_ack_pending.
 */
export class QueuePacer {
  readonly #hasRoomFor: (msg: JsMsg) => boolean;
  readonly #write: (msg: JsMsg) => void;
  #paced: JsMsg[] = [];
  #timer: NodeJS.Timeout | undefined;
  #paused = false;

  constructor(hasRoomFor: (msg: JsMsg) => boolean, write: (msg: JsMsg) => void) {
    this.#hasRoomFor = hasRoomFor;
    this.#write = write;
  }

  /** Deliveries waiting for room. */
  get waiting(): number {
    return this.#paced.length;
  }

  /** Writes the delivery now if nothing waits before it and there is room, else queues it. */
  offer(msg: JsMsg): void {
    if (this.#paced.length > 0 || this.#paused || !this.#hasRoomFor(msg)) {
      this.#paced.push(msg);
      this.#arm();
      return;
    }
    this.#write(msg);
  }

  /** Writes the waiting deliveries that now fit, in order; keeps looking while some remain. */
  pump(): void {
    while (this.#paced.length > 0 && !this.#paused) {
      const next = this.#paced[0] as JsMsg;
      if (!this.#hasRoomFor(next)) break;
      this.#paced.shift();
      this.#write(next);
    }
    if (this.#paced.length === 0) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      return;
    }
    this.#arm();
  }

  /** Tells JetStream the waiting deliveries are still being worked on. */
  touch(): void {
    for (const msg of this.#paced) msg.working();
  }

  /** Stops writing and returns what waited (the drainer nakks it). */
  takeAll(): JsMsg[] {
    const paced = this.#paced;
    this.#paced = [];
    this.#paused = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    return paced;
  }

  /** Forgets what waited (the consumer is gone) and writes again. */
  reset(): void {
    this.takeAll();
    this.#paused = false;
  }

  #arm(): void {
    if (this.#timer || this.#paused) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.pump();
    }, PACE_POLL_MS);
    this.#timer.unref();
  }
}

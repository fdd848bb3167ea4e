import type { NatsConnection } from 'nats';

/**
 * The recipient sessions' subscriptions of one loop turn, sent together with one flush.
 *
 * A connect's session subscribes, then flushes so the server holds the interest before the socket
 * opens. Each connect's upgrade is its own I/O callback, and nats.js writes what a callback sent
 * at the end of it (a microtask) and a flush at once: every connect cost two socket writes (SUB,
 * then PING) and a PING/PONG round trip, on the edge (the writes were 6 % of its busy time in
 * figure 5's profile, the flush's alone) and on nats-server. Here a session hands over its
 * subscribe; at the end of the turn (setImmediate, after the turn's I/O callbacks, where a burst
 * of upgrades is handled) every subscribe handed over runs, then one flush sends their SUBs and
 * one PING in one write. The server answers a PING after every line sent before it, so its PONG
 * proves them all. A subscribe handed over after that waits for the next turn's PING.
 */
export class SharedFlush {
  readonly #nc: Pick<NatsConnection, 'flush'>;
  /** The subscribes of the current turn, and their common flush, not yet sent. */
  #pending: { makes: Array<() => void>; flushed: Promise<void> } | undefined;

  constructor(nc: Pick<NatsConnection, 'flush'>) {
    this.#nc = nc;
  }

  /**
   * Runs `make` (which subscribes) at the end of the loop turn, then resolves once the server
   * processed it; rejects with what `make` throws (the connection is closed), or the flush's error.
   */
  after(make: () => void): Promise<void> {
    let pending = this.#pending;
    if (!pending) {
      const makes: Array<() => void> = [];
      const flushed = new Promise<void>((resolve, reject) => {
        setImmediate(() => {
          // Subscribes handed over from here on need a PING sent after their own SUB.
          this.#pending = undefined;
          for (const m of makes) m();
          Promise.resolve()
            .then(() => this.#nc.flush())
            .then(resolve, reject);
        });
      });
      // Its waiters handle its outcome; when every subscribe of the turn threw, nobody waits.
      flushed.catch(() => undefined);
      pending = { makes, flushed };
      this.#pending = pending;
    }
    const { makes, flushed } = pending;
    return new Promise<void>((resolve, reject) => {
      makes.push(() => {
        try {
          make();
        } catch (err) {
          reject(err);
          return;
        }
        flushed.then(resolve, reject);
      });
    });
  }
}

/** The edge's shared flush as a function, for the sessions' deps. */
export function sharedFlush(
  nc: Pick<NatsConnection, 'flush'>,
): (make: () => void) => Promise<void> {
  const shared = new SharedFlush(nc);
  return (make) => shared.after(make);
}

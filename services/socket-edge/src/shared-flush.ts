import type { NatsConnection } from 'nats';

/**
 * One NATS flush (PING, then wait for the PONG) shared by every caller of the same loop turn.
 *
 * A connect's recipient session subscribes, then flushes so the server holds the interest before
 * the socket opens. nats.js sends one PING per flush(), so a ramp of connects paid a PING/PONG
 * round trip each, on the edge and on nats-server. The server answers PINGs in order, after every
 * protocol line sent before, so one PING sent after all of a turn's SUBs proves them all: the
 * first caller of a turn schedules the flush at the end of the turn (setImmediate, after the turn's
 * I/O callbacks, where a burst of upgrades is handled), and every later caller of that turn joins
 * it. A caller arriving after the PING left waits for the next one: its SUB is not covered.
 * The wait this adds to a connect is the rest of its turn; the cost it saves is one round trip
 * per connect but one per turn.
 */
export class SharedFlush {
  readonly #nc: Pick<NatsConnection, 'flush'>;
  /** The flush of the current turn, not yet sent. */
  #pending: Promise<void> | undefined;

  constructor(nc: Pick<NatsConnection, 'flush'>) {
    this.#nc = nc;
  }

  /** Resolves once the server processed everything this connection sent before the call. */
  flush(): Promise<void> {
    this.#pending ??= new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        // Callers from here on need a PING sent after their own protocol lines.
        this.#pending = undefined;
        Promise.resolve()
          .then(() => this.#nc.flush())
          .then(resolve, reject);
      });
    });
    return this.#pending;
  }
}

/** The edge's shared flush as a function, for the sessions' deps. */
export function sharedFlush(nc: Pick<NatsConnection, 'flush'>): () => Promise<void> {
  const shared = new SharedFlush(nc);
  return () => shared.flush();
}

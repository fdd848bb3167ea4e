import type { MsgHdrs, NatsConnection } from 'nats';

export interface TurnPublishOptions {
  reply?: string;
  headers?: MsgHdrs;
}

/** The part of a NATS connection a fire-and-forget publisher uses: `nc` itself or a TurnPublisher. */
export interface Publisher {
  publish(subject: string, payload: string | Uint8Array, options?: TurnPublishOptions): void;
}

interface Pending {
  subject: string;
  /** A function: the payload is built when the turn's messages leave (see publishBuilt). */
  payload: string | Uint8Array | (() => Uint8Array);
  options: TurnPublishOptions | undefined;
  onError: ((err: unknown) => void) | undefined;
}

/**
 * Publishes at the end of the event-loop turn (setImmediate), in call order, so that nats.js
 * writes every message of a turn to its socket in one write. nats.js flushes its outbound buffer
 * on a microtask, which under concurrent HTTP requests means one socket write per publish: each
 * request's body arrives in its own I/O callback, and its live push, its JetStream publish, its
 * `rt.queued` notice and its status record each ended in their own `write()`. In the offline
 * benchmark those writes were 23 % of ingress's CPU. Deferred to the turn's end, the publishes of
 * every request read in the same I/O phase share one write.
 *
 * Nothing is reordered: messages leave in the order `publish` was called. A message is handed to
 * nats.js at most one turn later, which on an idle process is at once.
 */
export class TurnPublisher implements Publisher {
  readonly #nc: Pick<NatsConnection, 'publish'>;
  #pending: Pending[] = [];
  #scheduled = false;

  constructor(nc: Pick<NatsConnection, 'publish'>) {
    this.#nc = nc;
  }

  /**
   * Queues a publish for the end of this turn. `onError` hears a publish nats.js refuses then
   * (connection closed or draining); without it the error is dropped, as for a fire-and-forget
   * notice.
   */
  publish(
    subject: string,
    payload: string | Uint8Array,
    options?: TurnPublishOptions,
    onError?: (err: unknown) => void,
  ): void {
    this.#pending.push({ subject, payload, options, onError });
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flush);
    }
  }

  /**
   * Queues a publish whose payload is built at the end of this turn, when the turn's messages are
   * handed to nats.js: its place in the order is taken now, its content may still grow until then
   * (a StatusBatcher adds the turn's later records to it). `build` runs once, in the flush.
   */
  publishBuilt(subject: string, build: () => Uint8Array): void {
    this.#pending.push({ subject, payload: build, options: undefined, onError: undefined });
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flush);
    }
  }

  readonly #flush = (): void => {
    this.#scheduled = false;
    const batch = this.#pending;
    this.#pending = [];
    for (const p of batch) {
      try {
        const payload = typeof p.payload === 'function' ? p.payload() : p.payload;
        this.#nc.publish(p.subject, payload, p.options);
      } catch (err) {
        p.onError?.(err);
      }
    }
  };
}

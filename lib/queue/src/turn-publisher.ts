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
  payload: string | Uint8Array;
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

  readonly #flush = (): void => {
    this.#scheduled = false;
    const batch = this.#pending;
    this.#pending = [];
    for (const p of batch) {
      try {
        this.#nc.publish(p.subject, p.payload, p.options);
      } catch (err) {
        p.onError?.(err);
      }
    }
  };
}

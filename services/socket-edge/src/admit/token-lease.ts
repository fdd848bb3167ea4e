import { HeraldError } from '@herald/proto';
import { type Deadline, type Deadlines, socketDeadlines } from '../socket/deadlines.js';

/**
 * The life of an open socket's recipient token: when it expires, `onExpired` gets 401
 * `token_expired` (the socket is then closed 4401), unless `renew` moved the deadline first (a
 * fresh token sent in-band). `stop` when the socket closes.
 */
export class TokenLease {
  #timer: Deadline | undefined;
  #expiresAt: number;
  readonly #onExpired: (err: HeraldError) => void;
  readonly #now: () => number;
  readonly #deadlines: Deadlines;

  constructor(
    expiresAt: number,
    onExpired: (err: HeraldError) => void,
    now = Date.now,
    deadlines = socketDeadlines,
  ) {
    this.#expiresAt = expiresAt;
    this.#onExpired = onExpired;
    this.#now = now;
    this.#deadlines = deadlines;
    this.#arm();
  }

  get expiresAt(): number {
    return this.#expiresAt;
  }

  /** A fresh token was accepted: its expiry replaces the current one. */
  renew(expiresAt: number): void {
    this.#expiresAt = expiresAt;
    this.#arm();
  }

  stop(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  #arm(): void {
    this.#timer?.cancel();
    const wait = this.#expiresAt - this.#now();
    if (wait <= 0) {
      this.#timer = undefined;
      this.#onExpired(
        new HeraldError(
          'token_expired',
          'the recipient token expired: reconnect with a fresh token, or send {"type":"token","token":…} before it expires (herald.v1)',
          { field: 'token' },
        ),
      );
      return;
    }
    // On the edge's shared deadline timer, not a setTimeout of this socket's own (deadlines.ts).
    this.#timer = this.#deadlines.at(this.#expiresAt, () => this.#arm());
  }
}

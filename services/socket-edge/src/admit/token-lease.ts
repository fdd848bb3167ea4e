import { HeraldError } from '@herald/proto';

/** Node's timers hold at most 2^31 - 1 ms; a later deadline is re-armed on the way. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The life of an open socket's recipient token: when it expires, `onExpired` gets 401
 * `token_expired` (the socket is then closed 4401), unless `renew` moved the deadline first (a
 * fresh token sent in-band). `stop` when the socket closes.
 */
export class TokenLease {
  #timer: NodeJS.Timeout | undefined;
  #expiresAt: number;
  readonly #onExpired: (err: HeraldError) => void;
  readonly #now: () => number;

  constructor(expiresAt: number, onExpired: (err: HeraldError) => void, now = Date.now) {
    this.#expiresAt = expiresAt;
    this.#onExpired = onExpired;
    this.#now = now;
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
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    clearTimeout(this.#timer);
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
    this.#timer = setTimeout(() => this.#arm(), Math.min(wait, MAX_TIMER_MS));
    this.#timer.unref();
  }
}

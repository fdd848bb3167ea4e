/**
 * Counts the sockets this process holds (open, or authenticating) against MAX_SOCKETS. A slot is
 * taken before the key is verified, so a burst of connects cannot overshoot while auth answers.
 */
export class SocketBudget {
  readonly max: number;
  #used = 0;

  constructor(max: number) {
    this.max = max;
  }

  /** Takes a slot; false when all are in use. */
  take(): boolean {
    if (this.#used >= this.max) return false;
    this.#used++;
    return true;
  }

  give(): void {
    if (this.#used > 0) this.#used--;
  }
}

/**
 * Holds a Daraja OAuth token until shortly before it expires, and shares one fetch between
 * concurrent callers, so a burst of payments costs one token request.
 */
export class TokenCache {
  readonly #fetch: () => Promise<{ token: string; expiresInMs: number }>;
  readonly #marginMs: number;
  readonly #now: () => number;
  #token: string | undefined;
  #expiresAt = 0;
  #inFlight: Promise<string> | undefined;

  /** `marginMs`: how long before expiry a token is replaced (covers clock skew and latency). */
  constructor(
    fetch: () => Promise<{ token: string; expiresInMs: number }>,
    opts: { marginMs: number; now?: () => number },
  ) {
    this.#fetch = fetch;
    this.#marginMs = opts.marginMs;
    this.#now = opts.now ?? Date.now;
  }

  get(): Promise<string> {
    if (this.#token !== undefined && this.#now() < this.#expiresAt - this.#marginMs) {
      return Promise.resolve(this.#token);
    }
    this.#inFlight ??= this.#fetch()
      .then(({ token, expiresInMs }) => {
        this.#token = token;
        this.#expiresAt = this.#now() + expiresInMs;
        return token;
      })
      .finally(() => {
        this.#inFlight = undefined;
      });
    return this.#inFlight;
  }

  /** Forgets the token (Daraja refused it): the next call fetches a new one. */
  clear(): void {
    this.#token = undefined;
    this.#expiresAt = 0;
  }
}

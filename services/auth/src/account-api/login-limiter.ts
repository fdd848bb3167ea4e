/** Options of {@link LoginLimiter}. */
export interface LoginLimiterOptions {
  /** Failed attempts allowed per key within the window (LOGIN_MAX_FAILURES). */
  maxFailures: number;
  /** The window, ms, counted from the first failure (LOGIN_WINDOW_MS). */
  windowMs: number;
  /** Most keys remembered; beyond it expired windows are swept, then the oldest dropped. */
  maxEntries?: number;
  now?: () => number;
}

interface Window {
  failures: number;
  start: number;
}

/**
 * Counts failed logins per key (email + client IP) in a fixed window, in memory. After
 * `maxFailures` failures the key is refused until the window ends; a success clears it. Each auth
 * instance counts on its own, so N instances allow up to N × maxFailures: enough to stop
 * password guessing, and no shared state to fail.
 */
export class LoginLimiter {
  readonly #windows = new Map<string, Window>();
  readonly #max: number;
  readonly #windowMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(opts: LoginLimiterOptions) {
    this.#max = opts.maxFailures;
    this.#windowMs = opts.windowMs;
    this.#maxEntries = opts.maxEntries ?? 100_000;
    this.#now = opts.now ?? Date.now;
  }

  /** Seconds until `key` may try again (at least 1), or undefined when it may try now. */
  retryAfter(key: string): number | undefined {
    const w = this.#live(key);
    if (!w || w.failures < this.#max) return undefined;
    return Math.max(1, Math.ceil((w.start + this.#windowMs - this.#now()) / 1000));
  }

  failed(key: string): void {
    const w = this.#live(key);
    if (w) {
      w.failures += 1;
      return;
    }
    if (this.#windows.size >= this.#maxEntries) this.#makeRoom();
    this.#windows.set(key, { failures: 1, start: this.#now() });
  }

  succeeded(key: string): void {
    this.#windows.delete(key);
  }

  get size(): number {
    return this.#windows.size;
  }

  #live(key: string): Window | undefined {
    const w = this.#windows.get(key);
    if (w && this.#now() >= w.start + this.#windowMs) {
      this.#windows.delete(key);
      return undefined;
    }
    return w;
  }

  #makeRoom(): void {
    const now = this.#now();
    for (const [key, w] of this.#windows) {
      if (now >= w.start + this.#windowMs) this.#windows.delete(key);
    }
    // Still full: forget the oldest window (Map keeps insertion order), not refuse everyone.
    if (this.#windows.size >= this.#maxEntries) {
      const oldest = this.#windows.keys().next().value;
      if (oldest !== undefined) this.#windows.delete(oldest);
    }
  }
}

/** How often the shared deadline timer ticks: a deadline is acted on within this after it, ms. */
export const DEADLINE_TICK_MS = 1000;

/** One scheduled deadline; `cancel` when what it guards is gone. */
export interface Deadline {
  cancel(): void;
}

interface Entry extends Deadline {
  fire: () => void;
  slot: number;
}

/**
 * Far deadlines of many sockets (a key's expiry, a plan's lapse, a recipient token's expiry) on
 * ONE timer of a fixed period, instead of a `setTimeout` per socket.
 *
 * Why: Node keeps a list per distinct timeout duration, and an unref'd timer's list is not
 * removed when the timer is cleared, only when its duration elapses (lib/internal/timers.js,
 * `unenroll`). A socket's deadline timer has a duration of its own (`deadline - now`, to the ms),
 * so every socket that closed before its key's deadline left a list of about 160 bytes on the
 * heap until that deadline: hours for a Test key, the whole plan period for a Live one. Under the
 * soak's churn that was the one thing on the edge's heap that grew with the sockets ever opened
 * (issue 43). Here a deadline is an entry in a map by tick, deleted when cancelled, and the timer's
 * period never changes, so what is held is bounded by the deadlines pending.
 *
 * A deadline fires on the first tick at or after it (up to {@link DEADLINE_TICK_MS} late, never
 * early by `Date.now()`); one already passed fires on the next tick.
 */
export class Deadlines {
  readonly #tickMs: number;
  readonly #now: () => number;
  /** By slot (`ceil(at / tickMs)`): the deadlines due on that tick. */
  readonly #slots = new Map<number, Set<Entry>>();
  #size = 0;
  /** The next slot to fire; every slot before it has fired. */
  #cursor = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(opts: { tickMs?: number; now?: () => number } = {}) {
    this.#tickMs = opts.tickMs ?? DEADLINE_TICK_MS;
    // Read at each use, not captured: a test's fake clock replaces Date.
    this.#now = opts.now ?? (() => Date.now());
  }

  /** Deadlines pending (for tests and metrics). */
  get size(): number {
    return this.#size;
  }

  /** Calls `fire` once, on the first tick at or after `at` (epoch ms), unless cancelled first. */
  at(at: number, fire: () => void): Deadline {
    if (!this.#timer) this.#start();
    const slot = Math.max(Math.ceil(at / this.#tickMs), this.#cursor);
    const entry: Entry = { fire, slot, cancel: () => this.#remove(entry) };
    let due = this.#slots.get(slot);
    if (!due) {
      due = new Set();
      this.#slots.set(slot, due);
    }
    due.add(entry);
    this.#size++;
    return entry;
  }

  #remove(entry: Entry): void {
    const due = this.#slots.get(entry.slot);
    if (!due?.delete(entry)) return;
    if (due.size === 0) this.#slots.delete(entry.slot);
    if (--this.#size === 0) this.#stop();
  }

  #start(): void {
    this.#cursor = Math.floor(this.#now() / this.#tickMs);
    // One period for the edge's life: Node keeps one timer list for it, whatever comes and goes.
    this.#timer = setInterval(() => this.#tick(), this.#tickMs);
    this.#timer.unref();
  }

  #stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    const now = Math.floor(this.#now() / this.#tickMs);
    // Usually one slot; more after the event loop stalled (or a test's clock jumped).
    while (this.#cursor <= now && this.#size > 0) {
      // Moved on first: a deadline set by a callback below lands in a later slot, not this one.
      const slot = this.#cursor++;
      const due = this.#slots.get(slot);
      if (!due) continue;
      this.#slots.delete(slot);
      this.#size -= due.size;
      for (const entry of due) entry.fire();
    }
    if (this.#size === 0) this.#stop();
  }
}

/** The edge process's deadlines: every socket's key and token deadlines share its one timer. */
export const socketDeadlines = new Deadlines();

import { Cron } from 'croner';
import { type Clock, systemClock } from './clock.js';

export interface SchedulerOptions {
  clock?: Clock;
  /**
   * Longest single timer, ms. Node caps timers at ~24.8 days and a wall clock can jump, so a long
   * wait is a chain of shorter ones, each re-checking the time. Default 1 hour.
   */
  maxTimerMs?: number;
  /** Called when a firing is skipped because the previous run is still going. */
  onOverlap?: (slot: Date) => void;
  onError?: (err: unknown) => void;
}

/**
 * Fires `task` at each occurrence of a cron expression (UTC). croner computes the occurrences;
 * the timers come from an injectable {@link Clock}. A firing that finds the previous run still
 * going is skipped, not queued.
 */
export class Scheduler {
  readonly #cron: Cron;
  readonly #task: (slot: Date) => Promise<unknown>;
  readonly #clock: Clock;
  readonly #maxTimerMs: number;
  readonly #opts: SchedulerOptions;
  #timer: unknown;
  #next: Date | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = true;

  constructor(
    expression: string,
    task: (slot: Date) => Promise<unknown>,
    opts: SchedulerOptions = {},
  ) {
    this.#cron = new Cron(expression, { timezone: 'UTC', paused: true });
    this.#task = task;
    this.#clock = opts.clock ?? systemClock;
    this.#maxTimerMs = opts.maxTimerMs ?? 3_600_000;
    this.#opts = opts;
  }

  /** The next firing, or undefined when stopped (or the expression has no future occurrence). */
  get nextRun(): Date | undefined {
    return this.#stopped ? undefined : this.#next;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#next = this.#cron.nextRun(new Date(this.#clock.now())) ?? undefined;
    this.#arm();
  }

  /** Stops firing; resolves when a run in progress has finished. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running?.catch(() => undefined);
  }

  #arm(): void {
    if (this.#stopped || this.#next === undefined) return;
    const wait = Math.max(0, this.#next.getTime() - this.#clock.now());
    this.#timer = this.#clock.setTimeout(() => this.#tick(), Math.min(wait, this.#maxTimerMs));
  }

  #tick(): void {
    this.#timer = undefined;
    const slot = this.#next;
    if (this.#stopped || slot === undefined) return;
    if (this.#clock.now() < slot.getTime()) {
      this.#arm();
      return;
    }
    this.#next =
      this.#cron.nextRun(new Date(Math.max(this.#clock.now(), slot.getTime()))) ?? undefined;
    if (this.#running) {
      this.#opts.onOverlap?.(slot);
    } else {
      this.#running = this.#task(slot)
        .catch((err: unknown) => this.#opts.onError?.(err))
        .finally(() => {
          this.#running = undefined;
        });
    }
    this.#arm();
  }
}

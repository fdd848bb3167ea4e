import type { Logger } from '@herald/kit';
import type { Entry, FeedEntries } from './feed-entries.js';
import type { PositionSpace } from './feed-source.js';

/** Delay before a position proven outside a run's end is recorded (one KV write for a burst), ms. */
const RECORD_DELAY_MS = 50;

export interface FeedPositionInit {
  space: PositionSpace;
  account: string;
  recipient: string;
  device: string;
  /** The source's name, for the log. */
  name: string;
  logger: Logger;
  /** Entries keyed by position, forgotten once the floor passes them (it answers for them then). */
  forgets?: FeedEntries | undefined;
}

/**
 * One device's position in a source: everything up to the floor is proven by the device. The
 * catch-up covers what it read (in order, with the entry written for it) and marks where each of
 * its runs (one read) ended; the floor moves over the leading proven events only, never past an
 * unproven one, and is recorded once it passed a run's end (one KV write per proven run), 50 ms
 * after a catch-up that found everything proven already, and at the close. A device that
 * connects again starts after it.
 */
export class FeedPosition {
  readonly #init: FeedPositionInit;
  #floor = 0;
  #covered = 0;
  #recorded = 0;
  /** What the catch-up covered above the floor, in order, until proven. */
  #read: { position: number; entry: Entry }[] | undefined;
  /** Where the catch-up's runs ended, ascending, until the floor passed them. */
  #runEnds: number[] | undefined;
  #timer: NodeJS.Timeout | undefined;
  #recording: Promise<void> | undefined;
  /** A record is on its way; `#pending`: another is due once it is through. */
  #inFlight = false;
  #pending = false;
  #closed = false;

  constructor(init: FeedPositionInit) {
    this.#init = init;
  }

  /** Everything of the source up to here is proven by this device. */
  get floor(): number {
    return this.#floor;
  }

  /** The catch-up read every stored event up to here. */
  get covered(): number {
    return this.#covered;
  }

  /** Reads the device's recorded position (through `limit`, the edge's check slots). */
  async load(limit: <T>(check: () => Promise<T>) => Promise<T>): Promise<void> {
    const { space, account, recipient, device } = this.#init;
    const store = space.store;
    try {
      const at = store && (await limit(() => store.read(account, recipient, device)));
      // A position of another stream (the queue was re-partitioned) says nothing about this one.
      if (at && at.stream === space.stream) this.#floor = at.seq;
    } catch (err) {
      this.warn(err, 'position not read: catching up from the oldest event kept');
    }
    this.#covered = this.#floor;
    this.#recorded = this.#floor;
  }

  /** The catch-up read the event at `position`, handed to the socket as `entry`. */
  cover(position: number, entry: Entry): void {
    this.#read ??= [];
    this.#read.push({ position, entry });
    this.#covered = position;
  }

  /** The catch-up saw every stored event up to `position`. */
  coverTo(position: number): void {
    if (position > this.#covered) this.#covered = position;
  }

  /** A run of the catch-up (one read) ended at `position`: the floor's passing it is recorded at once. */
  endRun(position: number): void {
    this.#runEnds ??= [];
    if (position > (this.#runEnds.at(-1) ?? this.#floor)) this.#runEnds.push(position);
  }

  /**
   * Something was proven: advances, and when the floor passed a run's end, records it now (the
   * run is proven). True when it did: what waited on the run's proof may go too.
   */
  proven(): boolean {
    this.advance();
    const ends = this.#runEnds;
    if (!ends || ends.length === 0 || (ends[0] as number) > this.#floor) return false;
    let n = 0;
    while (n < ends.length && (ends[n] as number) <= this.#floor) n++;
    ends.splice(0, n);
    this.#recordNow();
    return true;
  }

  /**
   * Records the floor now; while a record is on its way, once more after it (not once per call):
   * runs proven faster than KV answers cost one write each round trip, not one each.
   */
  #recordNow(): void {
    if (this.#closed) return;
    if (this.#inFlight) {
      this.#pending = true;
      return;
    }
    this.#inFlight = true;
    this.#recording = (async () => {
      try {
        do {
          this.#pending = false;
          await this.record();
        } while (this.#pending && !this.#closed);
      } finally {
        this.#inFlight = false;
      }
    })();
  }

  /** Moves the floor over the leading run of proven events; over all it covered when all are. */
  advance(): void {
    const read = this.#read ?? [];
    const forgets = this.#init.forgets;
    let n = 0;
    for (const { position, entry } of read) {
      if (!entry.proven) break;
      this.#floor = position;
      forgets?.forget(position);
      n++;
    }
    if (n > 0) read.splice(0, n);
    if (read.length === 0) this.#floor = Math.max(this.#floor, this.#covered);
  }

  /** Records the position 50 ms from now, one KV write for a burst of proofs. */
  recordSoon(): void {
    if (this.#closed || this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#recordNow();
    }, RECORD_DELAY_MS);
    this.#timer.unref();
  }

  /** No more timed records; resolves once one that runs ended. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#recording;
  }

  /** Advances, and records the floor if it moved since the last record. */
  async record(): Promise<void> {
    this.advance();
    const { space, account, recipient, device } = this.#init;
    if (!space.store || this.#floor <= this.#recorded) return;
    const seq = this.#floor;
    try {
      await space.store.record(account, recipient, device, { stream: space.stream, seq });
      this.#recorded = Math.max(this.#recorded, seq);
    } catch (err) {
      this.warn(err, 'position not recorded: proven events may come again on the next connect');
    }
  }

  /** Whether the floor moved past what was recorded. */
  get unrecorded(): boolean {
    return this.#floor > this.#recorded;
  }

  warn(err: unknown, message: string): void {
    const { logger, device, name } = this.#init;
    logger.warn({ err: String(err), device }, `${name} ${message}`);
  }
}

import type { Logger } from '@herald/kit';
import type { StatusBatcher } from '@herald/status-client';
import type { Delivery } from '../socket/delivery.js';
import type { EdgeSocket } from '../socket/edge-socket.js';
import type { EventFrames } from '../socket/framing.js';
import type { FeedNotice, SocketFeed } from '../socket/socket-feed.js';
import { type Entry, FeedEntries, type FeedKey, newEntry, provenAtOnce } from './feed-entries.js';
import { FeedPosition } from './feed-position.js';
import type { FeedEvent, FeedSource } from './feed-source.js';
import { FeedWrite, type WriteOutcomes } from './feed-write.js';

/** What every catch-up feed of the edge shares. */
export interface FeedContext {
  logger: Logger;
  /** The edge's one status batcher: a catch-up write proven with no drain delivery waiting is `delivered`. */
  status: Pick<StatusBatcher, 'delivered'>;
  /** The edge's QUEUE_CHECK_CONCURRENCY slots, shared with the drainers: position reads and source reads. */
  limitChecks: <T>(check: () => Promise<T>) => Promise<T>;
  /**
   * MAX_UNPROVEN_EVENTS and MAX_UNPROVEN_BYTES: the most a feed holds of copies whose position it
   * does not know (they wait for the connect's catch-up). Past either such a copy is not taken (a
   * live one is then queued by its sender, a drained one nakked), so a catch-up stalled on a
   * reader that stopped holds no more. A copy with a position waits only while the catch-up is
   * behind it, and the drain that hands it is bounded by its consumer's max_ack_pending.
   */
  maxHeld: { events: number; bytes: number };
  /** INBOX_DEDUPE_IDS: the ids a feed keyed by id remembers; proven ones beyond it are forgotten. */
  dedupeIds: number;
}

/**
 * The events of one device socket (a `/ws/connect` with `device`): from the device's recorded
 * position, what its {@link FeedSource} stores after it, oldest first (the catch-up, which also
 * yields events another device already had), then on at every notice the source wakes on. Copies
 * from the drain and live pushes come through {@link offer} / {@link take}: each event is written
 * to the socket once, and a copy the catch-up is behind waits for its turn, so the device gets
 * its events in order. The position (src/feed/feed-position.ts) moves over proven events only.
 */
export class CatchUpFeed implements SocketFeed {
  readonly positionKey: string;
  readonly #socket: EdgeSocket;
  /** The socket's `device`: what its position is kept under, and who proved what it proves. */
  readonly #device: string;
  readonly #source: FeedSource;
  readonly #ctx: FeedContext;
  readonly #entries: FeedEntries;
  readonly #position: FeedPosition;
  /** A catch-up runs (from construction: the position is read first). */
  #reading = true;
  /** The connect's catch-up has not ended: a copy whose position is unknown waits until it has. */
  #connecting = true;
  #again = false;
  #stopped = false;
  /** Resolves the catch-up's wait for room on the socket. */
  #room: (() => void) | undefined;
  /** Copies written outside the catch-up its reads did not cover yet (live, drained, held past it). */
  #uncovered = 0;
  /** What the feed's writes report to, made at the first write. */
  #outcomes: WriteOutcomes | undefined;
  /** Ids of catch-up writes proven whose `delivered` records wait for their run's proof. */
  #delivered: string[] | undefined;

  constructor(socket: EdgeSocket, device: string, source: FeedSource, ctx: FeedContext) {
    this.#socket = socket;
    this.#device = device;
    this.#source = source;
    this.#ctx = ctx;
    this.positionKey = `${source.positions.stream}:${device}`;
    const byPosition = source.keyedBy === 'position';
    this.#entries = new FeedEntries(socket.framing, byPosition ? undefined : ctx.dedupeIds);
    this.#position = new FeedPosition({
      space: source.positions,
      account: socket.account,
      recipient: socket.recipient,
      device,
      name: source.name,
      logger: ctx.logger,
      forgets: byPosition ? this.#entries : undefined,
    });
  }

  async start(before?: Promise<void>): Promise<void> {
    await before?.catch(() => undefined);
    await this.#position.load(this.#ctx.limitChecks);
    if (this.#source.keyedBy === 'position') {
      this.#entries.proveHeldUpTo(this.#position.floor, this.#device);
    }
    this.#reading = false;
    this.kick();
  }

  kick(notice?: FeedNotice): void {
    if (this.#stopped || (notice !== undefined && notice !== this.#source.wakesOn)) return;
    if (this.#reading) {
      this.#again = true;
      return;
    }
    this.#reading = true;
    void this.#catchUp();
  }

  offer(seq: number, frames: EventFrames, delivery: Delivery): boolean {
    if (this.#source.keyedBy === 'position') return this.#copy(seq, seq, frames, delivery);
    // The drain's stream sequence is not a position of this source: the id is what matches.
    return this.#copy(frames.event.id, undefined, frames, delivery);
  }

  take(frames: EventFrames, delivery: Delivery): boolean {
    // A live event has no stream position: a source read by position never reads it.
    if (this.#source.keyedBy === 'position') return this.#socket.write(frames, delivery);
    return this.#copy(frames.event.id, undefined, frames, delivery);
  }

  /** The socket is gone: held copies are lost to their senders (who queue or nak), the position is recorded. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#room?.();
    for (const entry of this.#entries.held(false)) this.#entries.fail(entry);
    await this.#position.close();
    this.#flushDelivered();
    if (this.#uncovered > 0) await this.#coverWritten();
    await this.#position.record();
  }

  /** A copy from the drain or a live push: written once per key, held while the catch-up is behind it. */
  #copy(key: FeedKey, position: number | undefined, frames: EventFrames, delivery: Delivery) {
    if (this.#stopped) return false;
    if (position !== undefined && position <= this.#position.floor) {
      provenAtOnce(delivery, this.#device);
      return true;
    }
    const known = this.#entries.get(key);
    if (known) {
      if (known.lost) return false;
      if (known.proven) provenAtOnce(delivery, this.#device);
      else known.waiters.push(delivery);
      return true;
    }
    if (position === undefined) {
      // Its place in the source is unknown: it waits for the connect's catch-up, within maxHeld.
      if (this.#connecting) return this.#entries.hold(key, frames, delivery, this.#ctx.maxHeld);
    } else if (this.#reading && position > this.#position.covered) {
      return this.#entries.hold(key, frames, delivery, undefined);
    }
    const entry = newEntry(delivery);
    if (!this.#write(frames, entry)) return false;
    this.#entries.remember(key, entry);
    if (position === undefined || position > this.#position.covered) this.#uncovered++;
    return true;
  }

  async #catchUp(): Promise<void> {
    try {
      do {
        this.#again = false;
        for (;;) {
          if (this.#stopped || !this.#socket.open) return;
          // This read sees the copies written before it (stored first), covered once a run reaches
          // the end. A socket that goes meanwhile drops the run, and stop() covers them instead.
          const uncovered = this.#uncovered;
          const run = await this.#read();
          // The run's writes happen in this tick while the socket has room (an await only when it
          // has none): a batch=1 socket gets them as `events` frames (socket/queue-frame.ts),
          // a plain one in one corked write with one proof ping.
          for (const event of run.events) {
            if (this.#stopped) return;
            if (event.position <= this.#position.covered) continue;
            const frames = this.#framesFor(event);
            if (frames && !this.#hasRoom(frames)) await this.#roomFor(frames);
            if (this.#stopped || !this.#catchUpOn(event)) return;
          }
          this.#position.coverTo(run.covered);
          this.#position.endRun(run.covered);
          this.#uncovered -= run.more ? 0 : uncovered;
          if (!run.more) break;
        }
      } while (this.#again && !this.#stopped);
      // What the runs wrote may all be proven already (copies the drain wrote, or the device had).
      if (this.#position.proven()) this.#flushDelivered();
      else if (this.#position.unrecorded) this.#position.recordSoon();
    } catch (err) {
      this.#position.warn(err, 'catch-up failed: the rest comes at the next notice or connect');
    } finally {
      this.#reading = false;
      this.#connecting = false;
      this.#flushHeld();
    }
  }

  /** The frames a catch-up write of `event` would send; undefined when a copy was written already. */
  #framesFor(event: FeedEvent): EventFrames | undefined {
    const known = this.#entries.get(this.#keyOf(event));
    return known ? known.held : event.frames;
  }

  /** Writes a stored event unless a copy of it was written already; false when the socket refused it. */
  #catchUpOn(event: FeedEvent): boolean {
    const key = this.#keyOf(event);
    // A copy may have come while the socket had no room.
    let known = this.#entries.get(key);
    if (known?.held) {
      if (!this.#writeHeld(known)) return false;
    } else if (!known) {
      known = newEntry();
      if (!this.#write(event.frames, known)) return false;
      this.#entries.remember(key, known);
    }
    // Written live or by the drain (or just now): the floor waits for its proof.
    this.#position.cover(event.position, known);
    return true;
  }

  /** At the close, the positions of what was proven outside the catch-up since its last read (its notice may be late). */
  async #coverWritten(): Promise<void> {
    try {
      for (;;) {
        const run = await this.#read();
        for (const event of run.events) {
          const known = this.#entries.get(this.#keyOf(event));
          if (!known?.proven) return;
          this.#position.cover(event.position, known);
        }
        if (!run.more) return;
      }
    } catch (err) {
      this.#position.warn(err, 'position not moved over live events: they may come again');
    }
  }

  #read() {
    const source = this.#source;
    const after = this.#position.covered;
    return this.#ctx.limitChecks(() => source.read(after, source.run));
  }

  #keyOf(event: FeedEvent): FeedKey {
    return this.#source.keyedBy === 'position' ? event.position : event.frames.event.id;
  }

  /** Writes the copies still held once the catch-up ended (its reads missed them: uncovered). */
  #flushHeld(): void {
    if (this.#stopped) return;
    const held = this.#entries.held(this.#source.keyedBy === 'position');
    for (const entry of held) if (this.#writeHeld(entry)) this.#uncovered++;
  }

  #writeHeld(entry: Entry): boolean {
    if (this.#write(this.#entries.release(entry), entry)) return true;
    this.#entries.fail(entry);
    return false;
  }

  #hasRoom(frames: EventFrames): boolean {
    return this.#socket.hasRoomFor(frames.frameFor(this.#socket.framing).bytes);
  }

  /** Waits until the socket's unproven writes leave room (the drain's own pacing rule). */
  async #roomFor(frames: EventFrames): Promise<void> {
    while (!this.#stopped && !this.#hasRoom(frames)) {
      await new Promise<void>((resolve) => {
        this.#room = resolve;
      });
    }
  }

  #write(frames: EventFrames, entry: Entry): boolean {
    this.#outcomes ??= this.#newOutcomes();
    return this.#socket.write(frames, new FeedWrite(entry, frames.event.id, this.#outcomes));
  }

  /** The `delivered` records of the catch-up writes proven since the last flush. */
  #flushDelivered(): void {
    const ids = this.#delivered;
    if (!ids) return;
    this.#delivered = undefined;
    const { account, recipient } = this.#socket;
    for (const id of ids) this.#ctx.status.delivered(account, recipient, id, this.#device);
  }

  #newOutcomes(): WriteOutcomes {
    return {
      // Kept until its run is proven (or the socket goes): a run's records leave in one turn,
      // so in one status message (StatusBatcher), not one message per proof.
      delivered: (id) => {
        this.#delivered ??= [];
        this.#delivered.push(id);
      },
      failed: (entry) => this.#entries.fail(entry),
      settled: () => {
        const room = this.#room;
        this.#room = undefined;
        room?.();
        if (this.#position.proven()) this.#flushDelivered();
      },
    };
  }
}

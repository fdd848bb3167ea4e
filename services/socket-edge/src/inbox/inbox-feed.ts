import type { InboxCatchUpEvent } from '@herald/proto';
import { publishDelivered } from '../queue/status-events.js';
import type { Delivery } from '../socket/delivery.js';
import type { EdgeSocket, SocketFeed } from '../socket/edge-socket.js';
import { EventFrames } from '../socket/framing.js';
import {
  type Entry,
  INBOX_STREAM,
  type InboxFeedDeps,
  mayBeCut,
  trackedWrite,
} from './inbox-feed-deps.js';

const RECORD_DELAY_MS = 50;
const utf8 = new TextEncoder();

/**
 * The events of one herald.v1 device socket of an inbox key (docs/architecture.md, "Inbox mode: on
 * the socket"): from the device's inbox position, the store's events (`after`), oldest first, then
 * live. Live and drained copies come through {@link take} / {@link offer}: one write per id in
 * the session, held during a catch-up to keep store order. Each unread notice reads on. The
 * position moves only over a run of proven events; recorded 50 ms after a proof and at the close.
 */
export class InboxFeed implements SocketFeed {
  readonly #socket: EdgeSocket;
  readonly #device: string;
  readonly #deps: InboxFeedDeps;
  /** Every inbox event up to this sequence is proven by this device. */
  #floor = 0;
  /** The catch-up has read up to this sequence. */
  #covered = 0;
  #recorded = 0;
  /** The catch-up's events above the floor, in store order, until proven. */
  #read: { seq: number; entry: Entry }[] | undefined;
  /** By event id, insertion ordered (forgotten oldest-proven-first past `dedupeIds`); made at the first event. */
  #entries: Map<string, Entry> | undefined;
  /** A catch-up runs (from construction: the position is read first). */
  #reading = true;
  /** Until the connect's catch-up ends live and drained events wait their turn; then written at once. */
  #holding = true;
  #again = false;
  #stopped = false;
  #recordTimer: NodeJS.Timeout | undefined;
  #recording: Promise<void> | undefined;
  #room: (() => void) | undefined;
  #heldEvents = 0;
  /** Events written outside the catch-up (live, drained) since its last read: their seqs are unknown. */
  #uncovered = 0;
  #heldBytes = 0;

  constructor(socket: EdgeSocket, device: string, deps: InboxFeedDeps) {
    this.#socket = socket;
    this.#device = device;
    this.#deps = deps;
  }

  /** Reads the device's position (after `before`, the same device's previous record), then catches up. */
  async start(before?: Promise<void>): Promise<void> {
    const { account, recipient, inboxPositions } = this.#deps;
    try {
      await before?.catch(() => undefined);
      const at =
        inboxPositions &&
        (await this.#deps.limitChecks(() => inboxPositions.read(account, recipient, this.#device)));
      if (at && at.stream === INBOX_STREAM) this.#floor = at.seq;
    } catch (err) {
      this.#warn(err, 'inbox position not read: catching up from the oldest kept event');
    }
    this.#covered = this.#floor;
    this.#recorded = this.#floor;
    this.#reading = false;
    this.kick();
  }

  /** The store changed (an unread notice) or the session re-checks: read on from `covered`. */
  kick(): void {
    if (this.#stopped) return;
    if (this.#reading) {
      this.#again = true;
      return;
    }
    this.#reading = true;
    void this.#catchUp();
  }

  /** The queue drain's copy of an event (its stream sequence does not matter here: ids do). */
  offer(_seq: number, frames: EventFrames, delivery: Delivery): boolean {
    return this.take(frames, delivery);
  }

  /** A live or drained event for this socket: written once per id in the session. */
  take(frames: EventFrames, delivery: Delivery): boolean {
    if (this.#stopped) return false;
    const id = frames.event.id;
    const known = this.#entries?.get(id);
    if (known) {
      if (known.lost) return false;
      if (known.proven) {
        queueMicrotask(() => {
          delivery.written();
          delivery.proven();
        });
      } else known.waiters.push(delivery);
      return true;
    }
    const entry: Entry = { proven: false, lost: false, waiters: [delivery] };
    if (this.#holding) {
      const bytes = frames.frameFor(this.#socket.framing).bytes;
      const { events, bytes: maxBytes } = this.#deps.maxHeld;
      if (this.#heldEvents >= events || this.#heldBytes + bytes > maxBytes) return false;
      this.#heldEvents++;
      this.#heldBytes += bytes;
      entry.held = frames;
      this.#remember(id, entry);
      return true;
    }
    if (!this.#write(frames, entry)) return false;
    this.#remember(id, entry);
    this.#uncovered++;
    return true;
  }

  /** The socket is gone: held events are lost to their senders (who queue or nak), the position is recorded. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#room?.();
    for (const entry of this.#entries?.values() ?? []) if (entry.held) this.#fail(entry);
    clearTimeout(this.#recordTimer);
    await this.#recording;
    if (this.#uncovered > 0) await this.#coverWritten();
    await this.#record();
  }

  /** At the close, the seqs of what was proven live since the last read (its notice may be late). */
  async #coverWritten(): Promise<void> {
    try {
      for (;;) {
        const events = await this.#after();
        for (const ev of events) {
          const known = this.#entries?.get(ev.id);
          if (!known?.proven) return;
          this.#cover(ev.seq, known);
        }
        if (events.length < this.#deps.batch && !mayBeCut(events)) return;
      }
    } catch (err) {
      this.#warn(err, 'inbox position not moved over live events: they may come again');
    }
  }

  /** The store's events after what the catch-up covered, oldest first. */
  #after(): Promise<InboxCatchUpEvent[]> {
    const { inbox, account, recipient, batch } = this.#deps;
    const after = this.#covered;
    return this.#deps.limitChecks(() => inbox.after(account, recipient, after, batch));
  }

  async #catchUp(): Promise<void> {
    const { batch } = this.#deps;
    try {
      do {
        this.#again = false;
        for (;;) {
          if (this.#stopped || !this.#socket.open) return;
          this.#uncovered = 0;
          const events = await this.#after();
          for (const ev of events) {
            if (this.#stopped) return;
            if (ev.seq <= this.#covered) continue;
            const known = this.#entries?.get(ev.id);
            if (known?.held) {
              await this.#roomFor(known.held);
              if (this.#stopped || !this.#writeHeld(known)) return;
            } else if (!known) {
              const entry: Entry = { proven: false, lost: false, waiters: [] };
              const frames = new EventFrames({
                id: ev.id,
                ts: ev.ts,
                data: utf8.encode(ev.payload_json),
              });
              await this.#roomFor(frames);
              if (this.#stopped || !this.#write(frames, entry)) return;
              this.#remember(ev.id, entry);
              this.#cover(ev.seq, entry);
              continue;
            }
            // Written live or by the drain (or just now, held): the floor waits for its proof.
            if (known) this.#cover(ev.seq, known);
          }
          // The store cuts an answer to fit one NATS message: a short one that was big may be cut.
          if (events.length === 0 || (events.length < batch && !mayBeCut(events))) break;
        }
      } while (this.#again && !this.#stopped);
      this.#advance();
      if (this.#floor > this.#recorded) this.#recordSoon();
    } catch (err) {
      this.#warn(err, 'inbox catch-up failed: the rest comes at the next change or connect');
    } finally {
      this.#reading = false;
      this.#holding = false;
      this.#flushHeld();
    }
  }

  /** Writes what arrived during the catch-up and the store did not list (in arrival order). */
  #flushHeld(): void {
    if (this.#stopped) return;
    for (const entry of this.#entries?.values() ?? []) if (entry.held) this.#writeHeld(entry);
  }

  #writeHeld(entry: Entry): boolean {
    const frames = entry.held as EventFrames;
    this.#unhold(frames);
    entry.held = undefined;
    if (this.#write(frames, entry)) return true;
    this.#fail(entry);
    return false;
  }

  #unhold(frames: EventFrames): void {
    this.#heldEvents--;
    this.#heldBytes -= frames.frameFor(this.#socket.framing).bytes;
  }

  #fail(entry: Entry): void {
    if (entry.held) this.#unhold(entry.held);
    entry.held = undefined;
    entry.lost = true;
    const waiters = entry.waiters;
    entry.waiters = [];
    for (const d of waiters) d.lost();
  }

  /** Remembers an id; past the cap the oldest proven ids are forgotten (unproven ones are bounded by the socket's caps). */
  #remember(id: string, entry: Entry): void {
    this.#entries ??= new Map();
    const entries = this.#entries;
    entries.set(id, entry);
    if (entries.size <= this.#deps.dedupeIds) return;
    for (const [old, e] of entries) {
      if (entries.size <= this.#deps.dedupeIds) break;
      if (e.proven) entries.delete(old);
    }
  }

  async #roomFor(frames: EventFrames): Promise<void> {
    const bytes = frames.frameFor(this.#socket.framing).bytes;
    while (!this.#stopped && !this.#socket.hasRoomFor(bytes)) {
      await new Promise<void>((resolve) => {
        this.#room = resolve;
      });
    }
  }

  #write(frames: EventFrames, entry: Entry): boolean {
    const { statusBatcher, account, recipient } = this.#deps;
    const delivery = trackedWrite(entry, {
      // A catch-up write nobody else waits on: `delivered` now (the status keeps the first).
      delivered: () => publishDelivered(statusBatcher, account, recipient, frames.event.id),
      lost: () => this.#fail(entry),
      settled: () => this.#settled(),
    });
    return this.#socket.write(frames, delivery);
  }

  #settled(): void {
    const room = this.#room;
    this.#room = undefined;
    room?.();
    this.#recordSoon();
  }

  /** Records the position 50 ms from now, one KV write for a burst of proofs. */
  #recordSoon(): void {
    if (this.#stopped || this.#recordTimer) return;
    this.#recordTimer = setTimeout(() => {
      this.#recordTimer = undefined;
      this.#recording = this.#record();
    }, RECORD_DELAY_MS);
    this.#recordTimer.unref();
  }

  #warn(err: unknown, message: string): void {
    this.#deps.logger.warn({ err: String(err), device: this.#device }, message);
  }

  /** The catch-up read the event at `seq`, handed to the socket as `entry`. */
  #cover(seq: number, entry: Entry): void {
    this.#read ??= [];
    this.#read.push({ seq, entry });
    this.#covered = seq;
  }

  /** Moves the floor over the catch-up's leading run of proven events. */
  #advance(): void {
    let n = 0;
    for (const { seq, entry } of this.#read ?? []) {
      if (!entry.proven) break;
      this.#floor = seq;
      n++;
    }
    if (n > 0) this.#read?.splice(0, n);
  }

  async #record(): Promise<void> {
    this.#advance();
    const positions = this.#deps.inboxPositions;
    if (!positions || this.#floor <= this.#recorded) return;
    const seq = this.#floor;
    const { account, recipient } = this.#deps;
    try {
      await positions.record(account, recipient, this.#device, { stream: INBOX_STREAM, seq });
      this.#recorded = Math.max(this.#recorded, seq);
    } catch (err) {
      this.#warn(err, 'inbox position not recorded: proven events may come again');
    }
  }
}

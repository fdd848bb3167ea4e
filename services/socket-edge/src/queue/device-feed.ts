import type { Logger } from '@herald/kit';
import { isNoMessageFound } from '@herald/nats';
import type { DevicePositions } from '@herald/queue';
import type { StatusBatcher } from '@herald/status-client';
import type { JetStreamManager, MsgRequest, StoredMsg } from 'nats';
import type { Delivery } from '../socket/delivery.js';
import { edgeEventOf } from '../socket/edge-event.js';
import type { EdgeSocket } from '../socket/edge-socket.js';
import { EventFrames } from '../socket/framing.js';
import { publishDelivered } from './status-events.js';

export interface DeviceFeedDeps {
  jsm: Promise<JetStreamManager>;
  /** The bucket of device positions; without it a device starts from the first stored event. */
  devicePositions?: DevicePositions | undefined;
  account: string;
  recipient: string;
  /** The recipient's partition stream and queue subject. */
  stream: string;
  subject: string;
  logger: Logger;
  statusBatcher: Pick<StatusBatcher, 'add'>;
  /**
   * The edge's QUEUE_CHECK_CONCURRENCY slots, shared with the drainers' queue checks: a reconnect
   * storm of devices makes at most that many JetStream calls at once.
   */
  limitChecks: <T>(check: () => Promise<T>) => Promise<T>;
}

/** One stream sequence written to the device's socket in this session. */
interface Written {
  id: string;
  proven: boolean;
  /** The write can no longer be proven (the socket closed): the floor stops below it. */
  lost: boolean;
  /** Drain deliveries of the same event waiting for this write's outcome. */
  waiters: Delivery[];
  /** A drain delivery ahead of the catch-up, not written yet: the catch-up writes it in order. */
  held?: EventFrames | undefined;
}

/** Delay before a proven position is recorded, so a burst of proofs is one KV write, ms. */
const RECORD_DELAY_MS = 50;

/**
 * The queued events of one device socket (a `/ws/connect` with `device`): the recipient's stored
 * events after the device's recorded position, read by subject from the stream (the catch-up,
 * which also yields events the durable consumer already acked for another device), and the
 * drain's deliveries to this socket ({@link offer}), each written to the socket at most once. The
 * position (everything of the recipient's subject up to it proven by this device) is recorded in
 * the device positions bucket as proofs come in; a device that connects again starts after it.
 */
export class DeviceFeed {
  readonly #socket: EdgeSocket;
  readonly #device: string;
  readonly #deps: DeviceFeedDeps;
  /** Everything of the subject up to here is proven by this device. */
  #floor = 0;
  /** The catch-up read every stored event of the subject up to here. */
  #covered = 0;
  #recorded = 0;
  /** Made at the first write: most device sockets never get a queued event (an idle one holds none). */
  #written: Map<number, Written> | undefined;
  /** Drain offers that arrived before the position was read. */
  #early: { seq: number; frames: EventFrames; delivery: Delivery }[] | undefined = [];
  #reading = false;
  #again = false;
  #stopped = false;
  #recordTimer: NodeJS.Timeout | undefined;
  #recording: Promise<void> | undefined;
  /** Resolves the catch-up's wait for room on the socket. */
  #room: (() => void) | undefined;

  constructor(socket: EdgeSocket, device: string, deps: DeviceFeedDeps) {
    this.#socket = socket;
    this.#device = device;
    this.#deps = deps;
  }

  /**
   * Reads the device's position, then catches up.
   * @param before the recording of the device's previous socket's position, when still running
   */
  async start(before?: Promise<void>): Promise<void> {
    const { account, recipient, stream } = this.#deps;
    try {
      await before?.catch(() => undefined);
      const positions = this.#deps.devicePositions;
      const at =
        positions &&
        (await this.#deps.limitChecks(() => positions.read(account, recipient, this.#device)));
      // A position of another stream (the queue was re-partitioned) says nothing about this one.
      if (at && at.stream === stream) this.#floor = at.seq;
    } catch (err) {
      this.#deps.logger.warn(
        { err: String(err), device: this.#device },
        'device position not read: catching up from the first stored event',
      );
    }
    this.#covered = this.#floor;
    this.#recorded = this.#floor;
    const early = this.#early ?? [];
    this.#early = undefined;
    for (const o of early) if (!this.offer(o.seq, o.frames, o.delivery)) o.delivery.lost();
    this.kick();
  }

  /** Something may have been queued: read on from where the catch-up stopped. */
  kick(): void {
    if (this.#stopped || this.#early) return;
    if (this.#reading) {
      this.#again = true;
      return;
    }
    void this.#catchUp();
  }

  /**
   * The drain hands this socket the event at `seq`: written unless the device already has it
   * (proven now or in an earlier session: `delivery` is proven; written and unproven: `delivery`
   * follows that write). False when the socket refused it.
   */
  offer(seq: number, frames: EventFrames, delivery: Delivery): boolean {
    if (this.#early) {
      this.#early.push({ seq, frames, delivery });
      return true;
    }
    if (seq <= this.#floor) {
      queueMicrotask(() => delivery.proven());
      return true;
    }
    const known = this.#written?.get(seq);
    if (known?.lost) return false;
    if (known?.proven) queueMicrotask(() => delivery.proven());
    else if (known) known.waiters.push(delivery);
    // Ahead of a running catch-up: held, so the device gets its events in stream order.
    else if (this.#reading && seq > this.#covered)
      this.#entries().set(seq, { ...entryOf(frames), waiters: [delivery], held: frames });
    else return this.#write(seq, frames, { ...entryOf(frames), waiters: [delivery] });
    return true;
  }

  /** The socket is gone: records the last proven position. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#room?.();
    for (const o of this.#early ?? []) o.delivery.lost();
    this.#early = undefined;
    for (const entry of this.#written?.values() ?? []) if (entry.held) this.#fail(entry);
    clearTimeout(this.#recordTimer);
    await this.#recording;
    await this.#record();
  }

  async #catchUp(): Promise<void> {
    this.#reading = true;
    try {
      do {
        this.#again = false;
        for (;;) {
          if (this.#stopped || !this.#socket.open) return;
          const msg = await this.#next(this.#covered + 1);
          if (!msg || this.#stopped) break;
          this.#covered = msg.seq;
          const known = this.#written?.get(msg.seq);
          if (known?.held) {
            await this.#roomFor(known.held);
            if (this.#stopped || !this.#writeHeld(msg.seq, known)) return;
            continue;
          }
          if (msg.seq <= this.#floor || known) continue;
          const event = edgeEventOf(msg.header, msg.data, () => ({
            id: `seq-${msg.seq}`,
            ts: Math.floor(msg.time.getTime()),
          }));
          const frames = new EventFrames(event);
          await this.#roomFor(frames);
          if (this.#stopped || !this.#write(msg.seq, frames, entryOf(frames))) return;
        }
      } while (this.#again && !this.#stopped);
      this.#advance();
    } catch (err) {
      this.#deps.logger.warn(
        { err: String(err), device: this.#device },
        'device catch-up failed: the rest comes at the next notice or connect',
      );
    } finally {
      this.#reading = false;
      this.#flushHeld();
    }
  }

  /** Writes what the drain handed over ahead of the catch-up and is still held, in order. */
  #flushHeld(): void {
    if (this.#stopped) return;
    if (!this.#written) return;
    const held = [...this.#written].filter(([, e]) => e.held).sort(([a], [b]) => a - b);
    for (const [seq, entry] of held) this.#writeHeld(seq, entry);
  }

  #writeHeld(seq: number, entry: Written): boolean {
    const frames = entry.held as EventFrames;
    entry.held = undefined;
    if (this.#write(seq, frames, entry)) return true;
    this.#fail(entry);
    return false;
  }

  /** The entry's write can no longer happen or be proven: its drain deliveries are lost. */
  #fail(entry: Written): void {
    entry.held = undefined;
    entry.lost = true;
    const waiters = entry.waiters;
    entry.waiters = [];
    for (const d of waiters) d.lost();
  }

  /** The subject's first stored event at or after `seq`, or undefined. */
  async #next(seq: number): Promise<StoredMsg | undefined> {
    const jsm = await this.#deps.jsm;
    try {
      // nats.js types STREAM.MSG.GET without next_by_subj, which servers >= 2.9 accept.
      const query = { next_by_subj: this.#deps.subject, seq } as unknown as MsgRequest;
      return await this.#deps.limitChecks(() => jsm.streams.getMessage(this.#deps.stream, query));
    } catch (err) {
      if (isNoMessageFound(err)) return undefined;
      throw err;
    }
  }

  /** Waits until the socket's unproven writes leave room (the drain's own pacing rule). */
  async #roomFor(frames: EventFrames): Promise<void> {
    const bytes = frames.frameFor(this.#socket.framing).bytes;
    while (!this.#stopped && !this.#socket.hasRoomFor(bytes)) {
      await new Promise<void>((resolve) => {
        this.#room = resolve;
      });
    }
  }

  /** Writes the event at `seq`, tracking its proof for the position and for `entry`'s waiters. */
  #write(seq: number, frames: EventFrames, entry: Written): boolean {
    const tracked: Delivery = {
      live: false,
      written: () => {
        for (const d of entry.waiters) d.written();
      },
      overdue: () => {},
      proven: () => {
        entry.proven = true;
        const waiters = entry.waiters;
        entry.waiters = [];
        // A drain delivery acks the durable consumer, which records `delivered`; a catch-up write
        // of an event not yet acked there makes it `delivered` now (the status keeps the first).
        const { statusBatcher, account, recipient } = this.#deps;
        if (waiters.length === 0) publishDelivered(statusBatcher, account, recipient, entry.id);
        for (const d of waiters) d.proven();
        this.#settled();
      },
      lost: () => {
        this.#fail(entry);
        this.#settled();
      },
    };
    if (!this.#socket.write(frames, tracked)) return false;
    this.#entries().set(seq, entry);
    return true;
  }

  #entries(): Map<number, Written> {
    this.#written ??= new Map();
    return this.#written;
  }

  #settled(): void {
    const room = this.#room;
    this.#room = undefined;
    room?.();
    if (this.#stopped || this.#recordTimer) return;
    this.#recordTimer = setTimeout(() => {
      this.#recordTimer = undefined;
      this.#recording = this.#record();
    }, RECORD_DELAY_MS);
    this.#recordTimer.unref();
  }

  /** Moves the floor over every proven write below what the catch-up covered, and forgets them. */
  #advance(): void {
    for (const [seq, entry] of [...(this.#written ?? [])].sort(([a], [b]) => a - b)) {
      if (seq > this.#covered) break;
      if (!entry.proven) return;
      this.#floor = seq;
      this.#written?.delete(seq);
    }
    // Every event of the subject up to `covered` was written and proven, or was below the floor.
    this.#floor = Math.max(this.#floor, this.#covered);
  }

  async #record(): Promise<void> {
    this.#advance();
    const positions = this.#deps.devicePositions;
    if (!positions || this.#floor <= this.#recorded) return;
    const seq = this.#floor;
    const { account, recipient, stream } = this.#deps;
    try {
      await positions.record(account, recipient, this.#device, { stream, seq });
      this.#recorded = Math.max(this.#recorded, seq);
    } catch (err) {
      this.#deps.logger.warn(
        { err: String(err), device: this.#device },
        'device position not recorded: proven events may come again on its next connect',
      );
    }
  }
}

function entryOf(frames: EventFrames): Written {
  return { id: frames.event.id, proven: false, lost: false, waiters: [] };
}

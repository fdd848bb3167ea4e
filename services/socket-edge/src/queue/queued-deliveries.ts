import type { JsMsg } from 'nats';
import type { Delivery } from '../socket/delivery.js';
import { queuedEventOf } from '../socket/edge-event.js';
import type { EdgeSocket } from '../socket/edge-socket.js';
import { EventFrames } from '../socket/framing.js';
import { corkForTick } from '../socket/tick-cork.js';
import type { AckFloor } from './ack-floor.js';

type Settle = (entry: InFlight, how: 'ack' | 'nak', device?: string) => void;

/**
 * One queued event handed to sockets and not yet acked or nakked. It is also the {@link Delivery}
 * of each of its writes (they all settle it the same way), so a write costs no object of its own.
 */
class InFlight implements Delivery {
  readonly live = false;
  readonly id: string;
  /**
   * Deliveries carrying this id, one per stream sequence (a redelivery replaces its predecessor).
   * Almost always one: the sequences are compared only when the id comes again, so the common
   * case never parses a reply subject (nats.js's `seq` does, a cost the drain would pay per event).
   */
  readonly msgs: JsMsg[];
  /** Writes of it that may still be proven (handed to a socket, neither proven nor lost). */
  pending = 0;
  readonly #settle: Settle;

  constructor(id: string, msg: JsMsg, settle: Settle) {
    this.id = id;
    this.msgs = [msg];
    this.#settle = settle;
  }

  written(): void {}

  overdue(): void {}

  /** A socket proved receipt: acked, whatever the other sockets do. */
  proven(device?: string): void {
    this.#settle(this, 'ack', device);
  }

  /** A write can no longer be proven: nakked once none of its writes can. */
  lost(): void {
    if (--this.pending <= 0) this.#settle(this, 'nak');
  }
}

/**
 * The recipient's queued events this edge wrote to sockets and JetStream has not been told about.
 * An event is acked once any socket proves receipt (a herald.v1 ack of its id, or in plain framing
 * the pong of a ping sent after it: not the mere completion of the write, which only put it in a
 * kernel buffer that dies with the connection), and nakked once no socket can prove it any more
 * (each was closed, or refused the write), so it comes again at once rather than after ack_wait.
 */
export class QueuedDeliveries {
  readonly #inFlight = new Map<string, InFlight>();
  readonly #onAcked: (id: string, device: string | undefined) => void;
  readonly #onSettled: () => void;
  readonly #onAllAcked: ((msg: JsMsg, id: string) => void) | undefined;
  /** While the drainer stops: naks are kept here and sent by it, after its cleanup. */
  #held: JsMsg[] | undefined;
  /** Proven deliveries whose ack waits for {@link flushAcks}, with the ids they prove. */
  #acks: JsMsg[] = [];
  #ackedIds: string[] = [];
  /** The device of the socket that proved each of {@link #ackedIds}, if it had one. */
  #ackedDevices: (string | undefined)[] = [];
  #ackFlush: NodeJS.Immediate | undefined;
  /**
   * The consumer's proven floor when its ack policy is AckAll: a proof marks the delivery there,
   * and a flush sends one ack at the floor for every delivery it covers (set per run, by the
   * consumer found: a consumer made before AckAll keeps explicit acks, one per delivery).
   */
  floor: AckFloor | undefined;
  readonly #settleEntry: Settle = (entry, how, device) =>
    this.#settle(entry.id, entry, how, device);

  /**
   * @param onAcked an event was acked (metrics, status record), proven by a socket of `device`
   * @param onSettled an event was acked or nakked: sockets may have room again
   * @param onAllAcked acks went out and nothing is in flight any more: `msg` (whose id is `id`) is
   *   the last delivery acked
   */
  constructor(
    onAcked: (id: string, device: string | undefined) => void,
    onSettled: () => void,
    onAllAcked?: (msg: JsMsg, id: string) => void,
  ) {
    this.#onAcked = onAcked;
    this.#onSettled = onSettled;
    this.#onAllAcked = onAllAcked;
  }

  get size(): number {
    return this.#inFlight.size;
  }

  /** Writes a delivery to every socket of the recipient; nakked at once if none took it. */
  write(msg: JsMsg, sockets: Iterable<EdgeSocket>): void {
    const event = queuedEventOf(msg, () => ({
      id: `seq-${msg.seq}`,
      ts: Math.floor(msg.info.timestampNanos / 1_000_000),
    }));
    let entry = this.#inFlight.get(event.id);
    if (!entry) {
      entry = new InFlight(event.id, msg, this.#settleEntry);
      this.#inFlight.set(event.id, entry);
    } else {
      const same = entry.msgs.findIndex((m) => m.seq === msg.seq);
      if (same >= 0) entry.msgs[same] = msg;
      else entry.msgs.push(msg);
    }
    const current = entry;
    const frames = new EventFrames(event);
    for (const socket of sockets) {
      corkForTick(socket.ws);
      // A device socket gets each event once, whichever of the drain and its catch-up reads it first.
      if (socket.feed.offer(msg.seq, frames, current)) current.pending++;
    }
    if (current.pending === 0) this.#settle(event.id, current, 'nak');
  }

  /** From now on naks are held (see {@link takeHeld}) instead of sent; acks waiting go out now. */
  hold(): void {
    this.flushAcks();
    this.#held ??= [];
  }

  /**
   * Sends the acks of the deliveries proven since the last flush. Runs on `setImmediate` after a
   * proof, so every proof that arrived in one turn of the event loop (a client's acks come one
   * per TLS read when it is busy) shares one write to nats-server: with an ack sent at each proof,
   * nats.js flushed once per ack, a socket write per drained event. The delay is below one loop
   * turn, far inside ack_wait; a crash before it only
   * means a redelivery of proven events, which at-least-once allows and clients drop by id.
   */
  flushAcks(): void {
    if (this.#ackFlush) clearImmediate(this.#ackFlush);
    this.#ackFlush = undefined;
    if (this.floor) {
      this.#flushFloor(this.floor);
      return;
    }
    const msgs = this.#acks;
    const ids = this.#ackedIds;
    const devices = this.#ackedDevices;
    if (msgs.length === 0) return;
    this.#acks = [];
    this.#ackedIds = [];
    this.#ackedDevices = [];
    try {
      for (const msg of msgs) msg.ack();
    } catch {
      // The NATS connection is closing (shutdown): what was not acked is redelivered, at least once.
      return;
    }
    for (let i = 0; i < ids.length; i++) this.#onAcked(ids[i] as string, devices[i]);
    if (this.#onAllAcked && this.#inFlight.size === 0 && !this.#held)
      this.#onAllAcked(msgs[msgs.length - 1] as JsMsg, ids[ids.length - 1] as string);
  }

  /** One ack at the contiguous proven floor (AckAll): a run of proofs costs one write. */
  #flushFloor(floor: AckFloor): void {
    const taken = floor.take();
    if (!taken) return;
    try {
      taken.msg.ack();
    } catch {
      return;
    }
    let last: string | undefined;
    for (const { id, device } of taken.covered) {
      if (id === undefined) continue;
      this.#onAcked(id, device);
      last = id;
    }
    if (this.#onAllAcked && this.#inFlight.size === 0 && floor.size === 0 && !this.#held)
      this.#onAllAcked(taken.msg, last ?? `seq-${taken.msg.seq}`);
  }

  /** Nakks (into the hold, if holding) everything still in flight. */
  nakAll(): void {
    for (const [id, entry] of [...this.#inFlight]) this.#settle(id, entry, 'nak');
  }

  /** The deliveries whose nak was held; holding ends. */
  takeHeld(): JsMsg[] {
    const held = this.#held ?? [];
    this.#held = undefined;
    // Proven above an unproven one, so no ack could cover them: they come again, in order.
    if (this.floor) held.push(...this.floor.takeProven());
    return held;
  }

  /** Forgets everything (the consumer is gone: its messages cannot be acked any more). */
  clear(): void {
    this.#inFlight.clear();
    if (this.floor) this.floor.clear();
    else this.flushAcks();
  }

  /** Tells JetStream every delivery in flight is still being worked on, so ack_wait does not expire. */
  touch(): void {
    for (const entry of this.#inFlight.values()) for (const msg of entry.msgs) msg.working();
    this.floor?.touch();
  }

  #settle(id: string, entry: InFlight, how: 'ack' | 'nak', device?: string): void {
    if (this.#inFlight.get(id) !== entry) return;
    this.#inFlight.delete(id);
    const floor = this.floor;
    if (how === 'ack' && floor) {
      for (let i = 0; i < entry.msgs.length; i++)
        floor.proven(entry.msgs[i] as JsMsg, i === 0 ? id : undefined, device);
      this.#ackFlush ??= setImmediate(() => this.flushAcks());
    } else if (how === 'ack') {
      for (const msg of entry.msgs) this.#acks.push(msg);
      this.#ackedIds.push(id);
      this.#ackedDevices.push(device);
      this.#ackFlush ??= setImmediate(() => this.flushAcks());
    } else {
      if (floor) for (const msg of entry.msgs) floor.nakked(msg);
      if (this.#held) this.#held.push(...entry.msgs);
      else for (const msg of entry.msgs) msg.nak();
    }
    this.#onSettled();
  }
}

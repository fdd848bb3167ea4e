import { authorizeKeyUse, type KeyVerifier, keyUseDeadline } from '@herald/access';
import { type Client, CloseCodes, HeraldError, type VerifiedKey } from '@herald/proto';
import { WebSocket } from 'ws';
import { closeWithError } from './closing.js';
import { type Deadline, socketDeadlines } from './deadlines.js';
import type { Delivery } from './delivery.js';
import type { EventFrames, Framing } from './framing.js';
import { PingProof } from './ping-proof.js';
import { ProofLedger, type ProofLedgerOptions } from './proof-ledger.js';
import { QueueFrame, type QueueFrameLimits } from './queue-frame.js';
import type { SocketFeed } from './socket-feed.js';
import type { SocketWire } from './socket-wire.js';
import { corkUntilTickEnd } from './tick-cork.js';

export interface EdgeSocketInit {
  ws: WebSocket;
  framing: Framing;
  /** Kept in memory only, to re-verify the key when auth broadcasts an invalidation. Never logged. */
  apiKey: string;
  key: VerifiedKey;
  recipient: string;
  client: Client;
  /** The `device` of the connect, when given: its feed then catches the device up (src/feed/). */
  device?: string | undefined;
  /** Builds the socket's feed, which every write of an event to it goes through. */
  feed: (socket: EdgeSocket) => SocketFeed;
  origin: string | undefined;
  /** The caps on what is written and unproven, and the live proof deadline. */
  proof: ProofLedgerOptions;
  /**
   * herald.v1 sockets that connected with `batch=1`: what one `events` frame of queued events may
   * carry. Undefined (or at most one event per frame): one `event` frame per event.
   */
  queueFrames?: QueueFrameLimits | undefined;
  /** What the connect holds (MAX_SOCKETS slot, gate admission), released once the socket closed. */
  hold: { release(): void };
  /** Called once the WebSocket closed, before the socket is gone; shared by every socket. */
  onClosed: (socket: EdgeSocket) => void;
  /** Called once, when the socket stops taking events (the edge or the client began closing it). */
  onGone: (socket: EdgeSocket) => void;
  /** Called when a write found the unproven events or bytes at their cap (the socket is then closed with 1013). */
  onSlow: (socket: EdgeSocket) => void;
  /**
   * A socket of another protocol (the Pusher wing's): it frames the events and carries the proof
   * ping in-band. Its `framing` is then `plain`, which the feeds' size estimates read.
   */
  wire?: SocketWire | undefined;
}

/**
 * One client WebSocket and what the edge knows about it: its framing, verified key and recipient.
 * Writes go through {@link write}, which records each in the socket's {@link ProofLedger} until the
 * client proves receipt (a herald.v1 ack, or in plain framing the pong of a {@link PingProof})
 * and enforces the slow-reader cap on what is unproven.
 */
export class EdgeSocket {
  readonly ws: WebSocket;
  readonly framing: Framing;
  readonly recipient: string;
  readonly client: Client;
  readonly origin: string | undefined;
  readonly device: string | undefined;
  /** How events reach this socket: directly, or through its device's catch-up. */
  readonly feed: SocketFeed;
  key: VerifiedKey;
  /** Its slot among the heartbeat's ticks (see startHeartbeat). */
  heartbeatSlot: number | undefined;
  readonly #apiKey: string;
  readonly #proof: ProofLedgerOptions;
  readonly #queueFrames: QueueFrameLimits | undefined;
  /** The queued events of this tick, for one `events` frame (batch=1; created at the first). */
  #queueFrame: QueueFrame | undefined;
  /** What was written and not proven, created at the first write (an idle socket never needs one). */
  #ledger: ProofLedger | undefined;
  /** Plain framing's proof of receipt, created at the first write (an idle socket never needs one). */
  #pingProof: PingProof | undefined;
  readonly #hold: { release(): void };
  readonly #onClosed: (socket: EdgeSocket) => void;
  readonly #onGone: (socket: EdgeSocket) => void;
  readonly #onSlow: (socket: EdgeSocket) => void;
  readonly #wire: SocketWire | undefined;
  #gone = false;
  #alive = true;
  #expiry: Deadline | undefined;

  constructor(init: EdgeSocketInit) {
    this.ws = init.ws;
    this.framing = init.framing;
    this.#apiKey = init.apiKey;
    this.key = init.key;
    this.recipient = init.recipient;
    this.client = init.client;
    this.origin = init.origin;
    this.device = init.device;
    this.heartbeatSlot = undefined;
    this.#proof = init.proof;
    this.#queueFrames =
      init.framing !== 'plain' && init.queueFrames && init.queueFrames.events > 1
        ? init.queueFrames
        : undefined;
    this.#hold = init.hold;
    this.#onClosed = init.onClosed;
    this.#onGone = init.onGone;
    this.#onSlow = init.onSlow;
    this.#wire = init.wire;
    this.ws.on('pong', (data) => {
      this.#alive = true;
      // A wire socket's proof pings are in-band: a WebSocket pong answers only its heartbeat.
      if (!this.#wire) this.#pingProof?.pong(data);
    });
    // `on`, not `once`: ws emits 'close' once, and once() wraps every listener in two more objects.
    // One listener for the close: the hooks run in it, rather than a closure of each per socket.
    this.ws.on('close', () => {
      this.#onClosed(this);
      this.#hold.release();
      this.#markGone();
    });
    this.#armExpiry();
    this.feed = init.feed(this);
  }

  /** The account the socket's key belongs to: the tenant boundary of its subjects. */
  get account(): string {
    return this.key.account_id;
  }

  /** The socket's own protocol, when it has one (src/pusher/); undefined for `/ws/connect`. */
  get wire(): SocketWire | undefined {
    return this.#wire;
  }

  get open(): boolean {
    return !this.#gone && this.ws.readyState === WebSocket.OPEN;
  }

  /**
   * Hands an event to the socket. Returns false at once when the socket is closing or the write
   * would put its unproven events or bytes over their caps (the socket is then closed as a slow
   * consumer, 1013); else true, and `delivery` hears how it went (see {@link Delivery}). An empty
   * ledger takes any one event, so an event larger than the byte cap is still delivered.
   */
  write(frames: EventFrames, delivery: Delivery): boolean {
    if (!this.open) return false;
    const { data, bytes } = this.#wire ? this.#wire.frame(frames) : frames.frameFor(this.framing);
    this.#ledger ??= new ProofLedger(this.#proof, this.device);
    // What the socket has not even sent is unproven too: past the byte cap it is a slow consumer,
    // whatever the ledger says (a safety net: the ledger counts it, unless proofs were forged).
    if (!this.#ledger.fits(bytes) || this.ws.bufferedAmount > this.#proof.maxBytes) {
      this.#onSlow(this);
      this.close(CloseCodes.slowConsumer, 'slow consumer');
      return false;
    }
    this.#ledger.add(frames.event.id, bytes, delivery);
    if (this.#queueFrames) {
      // batch=1: a queued event joins the tick's `events` frame; a live one goes alone, after it.
      if (!delivery.live) {
        this.#queueFrame ??= new QueueFrame(this.ws, this.#queueFrames);
        this.#queueFrame.add(data as Buffer, frames.event.id, delivery);
        return true;
      }
      this.#queueFrame?.flush();
    }
    // Plain framing proves receipt with a ping sent after the frame: the transport stays corked
    // until the tick ends, when the ping is sent, so the tick's frames and their ping leave in one
    // TLS write (a ping written alone would cost a TLS write of its own, as the frame does).
    // A wire socket proves receipt the same way, with its protocol's in-band ping.
    if (this.framing === 'plain' || this.#wire) {
      this.#pingProof ??= this.#newPingProof();
      if (this.#pingProof.claimFlush()) corkUntilTickEnd(this.ws, flushProof, this.#pingProof);
    }
    // A failed write means the connection broke and its close follows, which reports every
    // unproven write lost, in write order: so the naks, and the redeliveries, keep stream order.
    this.ws.send(data, { binary: false }, (err) => {
      if (!err) delivery.written();
    });
    return true;
  }

  /**
   * A herald.v1 client acked an event id, or a list of them (the answer to an `events` frame): the
   * writes of each to this socket are proven. Ids it is not waiting for are ignored.
   */
  acked(ids: string | readonly string[]): void {
    const ledger = this.#ledger;
    if (!ledger) return;
    if (typeof ids === 'string') ledger.proveId(ids);
    else for (const id of ids) ledger.proveId(id);
  }

  /**
   * A wire socket's client answered its in-band proof ping: every write before that ping is
   * proven. Ignored while no proof ping is out.
   */
  proofAnswered(): void {
    this.#alive = true;
    this.#pingProof?.answered();
  }

  /**
   * Whether a write of `bytes` keeps the socket's unproven events and bytes at most half their
   * caps: the queue drainer writes only then, so a drain paces itself to a slow reader instead of
   * pushing it over the slow-consumer cap. A closed socket has room (its write fails at once and
   * the event is nakked).
   */
  hasRoomFor(bytes: number): boolean {
    return !this.open || !this.#ledger || this.#ledger.hasRoomFor(bytes);
  }

  /** Re-verifies the socket's key with auth (after an invalidation); rejects with the HeraldError. */
  reverify(verifier: KeyVerifier): Promise<VerifiedKey> {
    return verifier.verify(this.#apiKey);
  }

  /** Takes the answer of a re-verification (same key id), re-arming the expiry it may have moved. */
  refreshKey(key: VerifiedKey): void {
    this.key = key;
    this.#expiry?.cancel();
    if (!this.#gone) this.#armExpiry();
  }

  /** Closes for a policy reason (4000 + status), herald.v1 clients getting an ErrorFrame first. */
  fail(err: HeraldError): void {
    if (this.#wire) this.#wire.fail(err);
    else closeWithError(this.ws, err, this.framing);
    this.#markGone();
  }

  close(code: number, reason: string): void {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) {
      this.ws.close(code, reason);
    }
    this.#markGone();
  }

  /** One heartbeat tick: terminates a socket that did not answer the previous ping, else pings. */
  heartbeat(): void {
    // A wire socket's connection keeps the WebSocket's heartbeat (src/pusher/).
    if (this.#wire) return;
    if (!this.#alive) {
      this.ws.terminate();
      this.#markGone();
      return;
    }
    this.#alive = false;
    if (this.ws.readyState === WebSocket.OPEN) this.ws.ping();
  }

  #newPingProof(): PingProof {
    const wire = this.#wire;
    return new PingProof(
      (token) => {
        if (this.ws.readyState !== WebSocket.OPEN) return;
        if (wire) wire.sendProofPing();
        else this.ws.ping(token);
      },
      (seq) => this.#ledger?.proveUpTo(seq),
      () => this.#ledger?.lastSeq ?? 0,
    );
  }

  #markGone(): void {
    if (this.#gone) return;
    this.#gone = true;
    this.#expiry?.cancel();
    this.#pingProof?.stop();
    // The session hears first, so a drainer that is stopping holds the naks of what was lost.
    this.#onGone(this);
    this.#ledger?.close();
  }

  /**
   * A socket lives no longer than its key may be used: it is closed with 4401 `key_expired` when a
   * Test key expires and with 4403 `plan_inactive` when a Live key's paid period ends (herald.v1
   * clients get the ErrorFrame first). A re-verification that moves either deadline re-arms it.
   */
  #armExpiry(): void {
    const deadline = keyUseDeadline(this.key);
    if (deadline === null) return;
    // On the edge's shared deadline timer, not a setTimeout of this socket's own (deadlines.ts).
    this.#expiry = socketDeadlines.at(deadline, () => {
      try {
        authorizeKeyUse(this.key, { client: this.client, origin: this.origin, now: deadline });
      } catch (err) {
        if (err instanceof HeraldError) this.fail(err);
      }
    });
  }
}

/** The end of a tick with plain writes: the proof ping, if none is out (the write follows). */
function flushProof(proof: PingProof): void {
  proof.flush();
}

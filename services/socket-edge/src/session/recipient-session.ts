import { randomUUID } from 'node:crypto';
import type { Logger } from '@herald/kit';
import type { TurnPublisher } from '@herald/nats';
import { HeraldError, QueuedNotice, recipientSubjectKind, subjects } from '@herald/proto';
import type { DevicePositions } from '@herald/queue';
import type { Msg, NatsConnection, Subscription } from 'nats';
import type { EdgeMetrics } from '../metrics.js';
import { QueueDrainer, type QueueDrainerDeps } from '../queue/queue-drainer.js';
import { type EdgeEvent, edgeEventOf } from '../socket/edge-event.js';
import type { EdgeSocket } from '../socket/edge-socket.js';
import { EventFrames } from '../socket/framing.js';
import {
  decodeNotice,
  feedStopKey,
  forwardUnread,
  type InboxSessionDeps,
  newFeed,
} from '../socket-feeds.js';
import { LiveDelivery, liveReply } from './live-delivery.js';

/**
 * Most live requests held for a session whose subscription is up but whose first socket has not
 * opened yet (a window of about one NATS round trip). Beyond it a request is answered 0, and the
 * sender queues the event: nothing is lost.
 */
const EARLY_LIVE_MAX = 1000;

/** What every session of the edge shares: its deps but the recipient's own. */
export interface RecipientSessionDeps
  extends Omit<QueueDrainerDeps, 'sockets' | 'account' | 'recipient' | 'previous'> {
  nc: NatsConnection;
  /**
   * The edge's one turn publisher. Each live reply is sent when its socket write completes, and
   * those completions come one per callback, so sent at once every reply was its own write to
   * nats-server (9 % of the edge's time in figure 2's profile). Deferred to the end of the loop
   * turn, the turn's replies share one write, with the turn's status records.
   */
  publisher: Pick<TurnPublisher, 'publish'>;
  /** Delay after the start before the queue is checked once more, ms. */
  recheckMs: number;
  metrics: EdgeMetrics;
  logger: Logger;
  /** Where device sockets' positions are kept (lib/queue device-positions.ts). */
  devicePositions?: DevicePositions;
  /** Inbox keys: the store's client, device positions in the inbox, and the feed's bounds. */
  inbox?: InboxSessionDeps;
}

/**
 * Everything this edge holds for one recipient: their sockets (tabs, devices), ONE subscription to
 * their subjects (`rt.*.<account>.<recipient>`: live requests and queued-event notices), and the
 * drainer of their offline queue. Created for the first connect, closed when the last socket goes
 * (and no connect is pending). It is held once per connected recipient, so what it allocates up
 * front is kept small: the early-live buffer exists only while in use, the re-check timer is
 * dropped once it fired, and the drainer shares the session's deps object.
 *
 * Live events reach every socket of the session. Queued events are written to every socket too
 * and acked on the first proof, so a queued event reaches the recipient's sockets on one edge;
 * a socket that named its `device` also catches up through a {@link DeviceFeed} on what the
 * recipient's queue still stores after the device's position, so each device gets it once.
 */
export class RecipientSession {
  readonly account: string;
  readonly recipient: string;
  /** The session's deps and the drainer's, one object: it is kept once per connected recipient. */
  readonly #deps: RecipientSessionDeps & QueueDrainerDeps;
  /**
   * Copied on change, never changed in place: a loop over it (a live write, the drainer's) sees the
   * sockets of its start whatever closes meanwhile. An array of one socket costs ~60 bytes, a Set
   * ~170, and most recipients hold one socket.
   */
  #sockets: readonly EdgeSocket[] = [];
  readonly #drainer: QueueDrainer;
  #sub: Subscription | undefined;
  /** The subscription: being made, or `true` once made (a settled promise is not kept per session). */
  #ready: Promise<void> | true | undefined;
  /** Connects admitted for this recipient whose WebSocket is not open yet. */
  #pending = 0;
  #activated = false;
  /** Live requests that arrived between the subscription and the first socket (while any). */
  #early: Msg[] | undefined;
  #broken = false;
  #recheck: NodeJS.Timeout | undefined;
  #closed = false;
  /** Device feeds recording their last position, by device (a reconnect of it reads after). */
  #feedStops: Map<string, Promise<void>> | undefined;

  /**
   * @param shared the edge's deps, one object for every session
   * @param previous see {@link QueueDrainerDeps.previous}
   */
  constructor(
    shared: RecipientSessionDeps,
    account: string,
    recipient: string,
    previous?: Promise<void>,
  ) {
    // One object for the session and its drainer, built here once: a session is kept per
    // connected recipient. Flat, since the drainer spreads it into its queue lookups.
    const deps: RecipientSessionDeps & QueueDrainerDeps = {
      ...shared,
      account,
      recipient,
      previous,
      sockets: () => this.#sockets,
    };
    this.#deps = deps;
    this.account = account;
    this.recipient = recipient;
    this.#drainer = new QueueDrainer(deps);
  }

  /** No socket and no pending connect: the session can close. */
  get idle(): boolean {
    return this.#sockets.length === 0 && this.#pending === 0;
  }

  /** At least one socket is open and the session is not closing: a live event can be written. */
  get holding(): boolean {
    return this.#sockets.length > 0 && !this.#closed;
  }

  /** Subscribing failed (NATS unavailable): the session takes no more connects. */
  get broken(): boolean {
    return this.#broken;
  }

  sockets(): Iterable<EdgeSocket> {
    return this.#sockets;
  }

  /**
   * Subscribes to the live and queued-notice subjects and flushes, resolving once the server holds
   * the interest. The edge completes a connect's upgrade only after this, so a live event sent once
   * the client saw the socket open finds it (on this server; across a cluster, interest propagates
   * asynchronously and the queue covers the gap). Shared by every connect of the session.
   */
  ready(): Promise<void> {
    if (this.#ready === true) return Promise.resolve();
    this.#ready ??= this.#subscribe().then(() => {
      this.#ready = true;
    });
    return this.#ready;
  }

  /** Counts a connect that was admitted and waits for ready() and its upgrade. */
  reserve(): void {
    this.#pending++;
  }

  /**
   * Ends a reservation: with the socket that opened, or without one when the upgrade failed. The
   * first socket starts the queue drain: the queue is checked now (after the flush in ready(), so
   * an event queued after this check is announced by a notice the session receives) and once more
   * after QUEUE_RECHECK_MS, for a notice that crossed the cluster before the interest did.
   */
  settle(socket?: EdgeSocket): void {
    this.#pending = Math.max(0, this.#pending - 1);
    if (!socket || this.#closed) {
      // Answered 0, the held requests are queued by their senders at once.
      if (this.idle) this.#refuseEarly();
      return;
    }
    // concat and a literal size the array exactly; a spread would leave room for 16 more.
    if (!this.#sockets.includes(socket)) {
      this.#sockets = this.#sockets.length === 0 ? [socket] : this.#sockets.concat(socket);
      if (socket.device !== undefined) this.#startFeed(socket, socket.device);
    }
    const early = this.#early;
    this.#early = undefined;
    if (early) for (const msg of early) this.#deliverLive(msg);
    if (this.#activated) return;
    this.#activated = true;
    this.#drainer.kick();
    this.#recheck = setTimeout(() => {
      // A fired Timeout kept in a field stays on the heap as long as the session: drop it.
      this.#recheck = undefined;
      this.#drainer.recheck();
      for (const socket of this.#sockets) socket.feed?.kick();
    }, this.#deps.recheckMs);
    this.#recheck.unref();
  }

  /**
   * Removes a socket. What it had not proven is reported lost by its ledger right after: a queued
   * event no other socket can still prove is nakked, a live one is stored.
   */
  remove(socket: EdgeSocket): void {
    if (this.#sockets.includes(socket)) this.#sockets = this.#sockets.filter((s) => s !== socket);
    const { feed } = socket;
    if (!feed || socket.device === undefined) return;
    const device = feedStopKey(socket, socket.device);
    this.#feedStops ??= new Map();
    const stops = this.#feedStops;
    const stopped = feed.stop().finally(() => {
      if (stops.get(device) === stopped) stops.delete(device);
    });
    stops.set(device, stopped);
  }

  /** Starts a device socket's feed once the same device's last one recorded its position. */
  #startFeed(socket: EdgeSocket, device: string): void {
    const { feed, stopKey } = newFeed(socket, device, this.#deps);
    socket.feed = feed;
    void feed.start(this.#feedStops?.get(stopKey) ?? this.#deps.previous);
  }

  /** Unsubscribes, stops the drainer and nakks what it held, so the next connect gets it at once. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#recheck);
    this.#refuseEarly();
    this.#sub?.unsubscribe();
    await Promise.all([this.#drainer.stop(), ...(this.#feedStops?.values() ?? [])]);
  }

  async #subscribe(): Promise<void> {
    const { nc, account, recipient } = this.#deps;
    try {
      this.#sub = nc.subscribe(subjects.recipient(account, recipient), {
        callback: (err, msg) => {
          if (err) return;
          const kind = recipientSubjectKind(msg.subject);
          if (kind === 'live') this.#onLive(msg);
          else if (kind === 'queued') this.#onNotice(msg);
          // The inbox store's count after a change: to the session's herald.v1 inbox sockets.
          else if (kind === 'unread') forwardUnread(this.#sockets, msg, this.#deps.logger);
        },
      });
      await nc.flush();
    } catch (err) {
      this.#broken = true;
      this.#deps.logger.error({ err: String(err) }, 'could not subscribe a recipient session');
      throw new HeraldError(
        'unavailable',
        'The edge cannot reach NATS right now: reconnect shortly',
        { cause: err },
      );
    }
  }

  /** Answers the held live requests 0 (no socket of this session will take them): queued at once. */
  #refuseEarly(): void {
    const early = this.#early;
    this.#early = undefined;
    for (const msg of early ?? []) {
      if (msg.reply) this.#deps.publisher.publish(msg.reply, liveReply(0));
    }
  }

  #onLive(msg: Msg): void {
    if (this.#sockets.length === 0 && this.#pending > 0 && !this.#closed) {
      // The first socket is being opened: hold the event instead of letting the sender wait for a
      // reply that would not come (and queue it a timeout later).
      this.#early ??= [];
      if (this.#early.length < EARLY_LIVE_MAX) this.#early.push(msg);
      else if (msg.reply) this.#deps.publisher.publish(msg.reply, liveReply(0));
      return;
    }
    this.#deliverLive(msg);
  }

  /**
   * Writes a live event to every socket and replies {v:1, sockets} as soon as one socket proved
   * receipt, `sockets` being how many sockets the frame was handed to; {v:1, sockets: 0} as soon as
   * no socket can prove it any more (none took it, each closed or failed it, or its proof went
   * overdue after LIVE_PROOF_TIMEOUT_MS), and the sender queues it. A proof coming after the 0 is
   * not answered: the queued copy has the same id (see {@link LiveDelivery}).
   */
  #deliverLive(msg: Msg): void {
    const event = edgeEventOf(msg.headers, msg.data, () => ({ id: randomUUID(), ts: Date.now() }));
    const { reply } = msg;
    let answered = false;
    const answer = (sockets: number) => {
      if (answered || !reply) return;
      answered = true;
      this.#deps.publisher.publish(reply, liveReply(sockets));
    };
    this.pushLive(event, { sent: answer, unsent: () => answer(0) });
  }

  /**
   * Writes a live event to every socket of the session. `sent` is called once the first socket
   * proved receipt, with how many sockets the frame was handed to; `unsent` when no socket can
   * prove it any more (none took it, or every one closed or failed first; see
   * {@link LiveDeliveryHooks.unsent}). The returned delivery can be abandoned while unanswered (a
   * batch's answer without it).
   */
  pushLive(
    event: EdgeEvent,
    answer: { sent: (sockets: number) => void; unsent?: () => void },
  ): LiveDelivery {
    const frames = new EventFrames(event);
    const { metrics } = this.#deps;
    const live = new LiveDelivery({
      wrote: () => metrics.liveDeliveries.inc(),
      reply: answer.sent,
      unsent: answer.unsent,
    });
    for (const socket of this.#sockets) {
      // An inbox device socket takes live events through its feed: once per id, in store order.
      const d = live.forSocket();
      if (socket.feed?.take ? socket.feed.take(frames, d) : socket.write(frames, d)) live.handed();
    }
    live.offered();
    return live;
  }

  #onNotice(msg: Msg): void {
    if (!decodeNotice(QueuedNotice, msg.data)) {
      this.#deps.logger.warn({ subject: msg.subject }, 'ignoring malformed queued notice');
      return;
    }
    this.#drainer.kick();
    // An inbox feed reads on at the unread notice that the same event's store publishes.
    for (const socket of this.#sockets) if (!socket.inbox) socket.feed?.kick();
  }
}

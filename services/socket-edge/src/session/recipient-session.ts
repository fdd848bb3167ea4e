import { randomUUID } from 'node:crypto';
import {
  HeraldError,
  InboxUnreadNotice,
  PusherTerminate,
  QueuedNotice,
  recipientSubjectKind,
  subjects,
} from '@herald/proto';
import type { Msg, Subscription } from 'nats';
import { forwardUnread } from '../inbox/socket-inboxes.js';
import type { QueueDrainer } from '../queue/queue-drainer.js';
import { type EdgeEvent, edgeEventOf } from '../socket/edge-event.js';
import type { EdgeSocket } from '../socket/edge-socket.js';
import { EventFrames } from '../socket/framing.js';
import type { FeedNotice } from '../socket/socket-feed.js';
import { LiveDelivery, liveReply } from './live-delivery.js';
import { decodeNotice } from './notices.js';
import type { SessionContext } from './session-context.js';

/**
 * Most live requests held for a session whose subscription is up but whose first socket has not
 * opened yet (a window of about one NATS round trip). Beyond it a request is answered 0, and the
 * sender queues the event: nothing is lost.
 */
const EARLY_LIVE_MAX = 1000;

/**
 * Everything this edge holds for one recipient: their sockets (tabs, devices), ONE subscription to
 * their subjects (`rt.*.<account>.<recipient>`: live requests, queued-event and unread notices),
 * and the drain of their offline queue. Created for the first connect, closed when the last socket
 * goes (and no connect is pending). It is held once per connected recipient, so what it allocates
 * up front is kept small: the early-live buffer exists only while in use, the re-check timer is
 * dropped once it fired, and the drain keeps the session itself as its recipient.
 *
 * Live events reach every socket of the session. Queued events are written to every socket too
 * and acked on the first proof, so a queued event reaches the recipient's sockets on one edge.
 * Every write goes through the socket's feed: a device socket's catches up on what its source
 * still stores after the device's position (src/feed/), so each device gets each event once.
 */
export class RecipientSession {
  readonly account: string;
  readonly recipient: string;
  readonly #ctx: SessionContext;
  /**
   * Copied on change, never changed in place: a loop over it (a live write, the drainer's) sees the
   * sockets of its start whatever closes meanwhile. An array of one socket is smaller than a Set
   * of one, and most recipients hold one socket.
   */
  #sockets: readonly EdgeSocket[] = [];
  readonly #drain: QueueDrainer;
  /** The close of the recipient's previous session on this edge, while it ran at the start. */
  readonly #previous: Promise<void> | undefined;
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
  /** Device feeds recording their last position, by position key (a reconnect of it reads after). */
  #feedStops: Map<string, Promise<void>> | undefined;

  /**
   * @param ctx the edge's, one object for every session
   * @param previous the close of the recipient's last session on this edge, when still running: the
   *   drain and the device feeds start after it, so what it nakked or recorded comes first
   */
  constructor(ctx: SessionContext, account: string, recipient: string, previous?: Promise<void>) {
    this.#ctx = ctx;
    this.account = account;
    this.recipient = recipient;
    this.#previous = previous;
    this.#drain = ctx.drainFor(this, previous);
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
      const { feed } = socket;
      const key = feed.positionKey;
      const before = key === undefined ? undefined : this.#feedStops?.get(key);
      void feed.start(before ?? this.#previous);
    }
    const early = this.#early;
    this.#early = undefined;
    if (early) for (const msg of early) this.#deliverLive(msg);
    if (this.#activated) return;
    this.#activated = true;
    this.#drain.kick();
    this.#recheck = setTimeout(() => {
      // A fired Timeout kept in a field stays on the heap as long as the session: drop it.
      this.#recheck = undefined;
      this.#drain.recheck();
      for (const socket of this.#sockets) socket.feed.kick();
    }, this.#ctx.recheckMs);
    this.#recheck.unref();
  }

  /**
   * Removes a socket. What it had not proven is reported lost by its ledger right after: a queued
   * event no other socket can still prove is nakked, a live one is stored. Its feed records the
   * device's position; the device's next feed in this session starts after that.
   */
  remove(socket: EdgeSocket): void {
    if (this.#sockets.includes(socket)) this.#sockets = this.#sockets.filter((s) => s !== socket);
    const { feed } = socket;
    const stopped = feed.stop();
    const key = feed.positionKey;
    if (key === undefined) return;
    this.#feedStops ??= new Map();
    const stops = this.#feedStops;
    const recorded = stopped.finally(() => {
      if (stops.get(key) === recorded) stops.delete(key);
    });
    stops.set(key, recorded);
  }

  /** Unsubscribes, stops the drainer and nakks what it held, so the next connect gets it at once. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#recheck);
    this.#refuseEarly();
    this.#sub?.unsubscribe();
    await Promise.all([this.#drain.stop(), ...(this.#feedStops?.values() ?? [])]);
  }

  async #subscribe(): Promise<void> {
    const { nc } = this.#ctx;
    try {
      this.#sub = nc.subscribe(subjects.recipient(this.account, this.recipient), {
        callback: (err, msg) => {
          if (err) return;
          const kind = recipientSubjectKind(msg.subject);
          if (kind === 'live') this.#onLive(msg);
          else if (kind === 'queued' || kind === 'unread') this.#onNotice(kind, msg);
          else if (kind === 'terminate') this.#onTerminate(msg);
        },
      });
      await nc.flush();
    } catch (err) {
      this.#broken = true;
      this.#ctx.logger.error({ err: String(err) }, 'could not subscribe a recipient session');
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
      if (msg.reply) this.#ctx.publisher.publish(msg.reply, liveReply(0));
    }
  }

  #onLive(msg: Msg): void {
    if (this.#sockets.length === 0 && this.#pending > 0 && !this.#closed) {
      // The first socket is being opened: hold the event instead of letting the sender wait for a
      // reply that would not come (and queue it a timeout later).
      this.#early ??= [];
      if (this.#early.length < EARLY_LIVE_MAX) this.#early.push(msg);
      else if (msg.reply) this.#ctx.publisher.publish(msg.reply, liveReply(0));
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
      this.#ctx.publisher.publish(reply, liveReply(sockets));
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
    const { metrics } = this.#ctx;
    const live = new LiveDelivery({
      wrote: () => metrics.liveDeliveries.inc(),
      reply: answer.sent,
      unsent: answer.unsent,
    });
    for (const socket of this.#sockets) {
      // An inbox device socket's feed writes each id once, in store order.
      if (socket.feed.take(frames, live.forSocket())) live.handed();
    }
    live.offered();
    return live;
  }

  /**
   * `terminate_connections` of a Pusher app (`rt.pterm.<a>.<r>`): the recipient's sockets of that
   * app close (each Pusher socket's wire checks the app); `/ws/connect` sockets are not concerned.
   */
  #onTerminate(msg: Msg): void {
    const notice = decodeNotice(PusherTerminate, msg.data);
    if (!notice) {
      this.#ctx.logger.warn({ subject: msg.subject }, 'ignoring malformed terminate notice');
      return;
    }
    for (const socket of this.#sockets) socket.wire?.terminate(notice.app_id);
  }

  /**
   * A queued-event notice (the drain checks the queue) or the inbox store's unread count after a
   * change (to the session's herald.v1 inbox sockets); each socket's feed reads on if its source
   * wakes on that notice.
   */
  #onNotice(kind: FeedNotice, msg: Msg): void {
    const notice = decodeNotice(kind === 'queued' ? QueuedNotice : InboxUnreadNotice, msg.data);
    if (!notice) {
      this.#ctx.logger.warn({ subject: msg.subject }, `ignoring malformed ${kind} notice`);
      return;
    }
    if ('unread' in notice) forwardUnread(this.#sockets, notice.unread);
    else this.#drain.kick();
    for (const socket of this.#sockets) socket.feed.kick(kind);
  }
}

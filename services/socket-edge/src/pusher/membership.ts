import { HeraldError, type VerifiedKey } from '@herald/proto';
import type { WebSocket } from 'ws';
import type { RecipientSession } from '../session/recipient-session.js';
import { EdgeSocket } from '../socket/edge-socket.js';
import type { EventFrames } from '../socket/framing.js';
import type { SocketWire } from '../socket/socket-wire.js';
import { type MemberFrame, memberFrame } from './member-frames.js';
import type { PusherContext } from './pusher-context.js';
import { PING_BYTES, PusherClose, pusherCloseOf } from './pusher-frames.js';

/** What a membership needs of its Pusher socket (pusher-socket.ts), which owns the WebSocket. */
export interface MemberOwner {
  readonly ws: WebSocket;
  readonly account: string;
  readonly key: VerifiedKey;
  readonly origin: string | undefined;
  readonly app: { readonly app_id: string };
  readonly open: boolean;
  send(frame: string | Buffer): void;
  refuse(code: number, message: string): void;
  channelFor(envelopeChannel: string | undefined, member: Membership): string;
}

/** Nothing to give back: the Pusher socket holds the connect's slot and cap admission itself. */
const NO_HOLD = { release() {} };
const noop = () => {};

/**
 * A Pusher socket's membership of its user's recipient session: made when it signs in, or when
 * it subscribes (signed) to the app's user channel for an id. The socket then joins the session
 * exactly as a `/ws/connect` socket does (reserve it, wait until it holds the recipient's
 * subscription, attach an {@link EdgeSocket} on the same WebSocket with its feed), so live pushes,
 * the queue drain and a device's catch-up reach it, and each event is proven by the client's
 * `pusher:pong` to the `pusher:ping` written after it. One membership per socket.
 */
export class Membership implements SocketWire {
  readonly recipient: string;
  readonly userId: string;
  readonly device: string | undefined;
  /** The user channel it joined through (Laravel Echo's), when not through sign-in. */
  readonly viaChannel: string | undefined;
  readonly #owner: MemberOwner;
  #socket: EdgeSocket | undefined;

  constructor(
    owner: MemberOwner,
    who: { recipient: string; userId: string; device?: string; viaChannel?: string },
  ) {
    this.#owner = owner;
    this.recipient = who.recipient;
    this.userId = who.userId;
    this.device = who.device;
    this.viaChannel = who.viaChannel;
  }

  /** The member socket, once attached. */
  get socket(): EdgeSocket | undefined {
    return this.#socket;
  }

  /** Joins the recipient's session; a socket closed meanwhile leaves it at once. */
  async join(ctx: PusherContext): Promise<void> {
    const owner = this.#owner;
    // The shutdown closes every Pusher socket: none joins a session it is closing.
    if (ctx.closing()) return;
    let session: RecipientSession;
    try {
      session = ctx.sessions.reserve(owner.account, this.recipient);
    } catch (err) {
      ctx.logger.error({ err: String(err) }, 'could not reserve a Pusher member session');
      owner.refuse(PusherClose.overCapacity, 'Internal error: reconnect shortly');
      return;
    }
    try {
      await session.ready();
    } catch (err) {
      ctx.sessions.cancel(session);
      const error = err instanceof HeraldError ? err : new HeraldError('unavailable', String(err));
      owner.refuse(pusherCloseOf(error), error.message);
      return;
    }
    if (!owner.open || ctx.closing()) {
      ctx.sessions.cancel(session);
      return;
    }
    const socket = new EdgeSocket({
      ws: owner.ws,
      framing: 'plain',
      apiKey: '',
      key: owner.key,
      recipient: this.recipient,
      client: owner.key.client,
      device: this.device,
      feed: ctx.feedFor,
      origin: owner.origin,
      proof: ctx.proof,
      hold: NO_HOLD,
      onClosed: noop,
      onGone: (s) => ctx.sessions.detach(session, s),
      onSlow: () => ctx.metrics.slowConsumerCloses.inc(),
      wire: this,
    });
    this.#socket = socket;
    ctx.sessions.attach(session, socket);
  }

  /** The client answered a `pusher:ping`: what was written before it is proven. */
  proofAnswered(): void {
    this.#socket?.proofAnswered();
  }

  frame(frames: EventFrames): MemberFrame {
    return memberFrame(frames, (channel) => this.#owner.channelFor(channel, this));
  }

  sendProofPing(): void {
    this.#owner.send(PING_BYTES);
  }

  fail(err: HeraldError): void {
    this.#owner.refuse(pusherCloseOf(err), err.message);
  }

  terminate(appId: string): void {
    if (this.#owner.app.app_id !== appId) return;
    this.#owner.refuse(PusherClose.unauthorized, 'You got disconnected by the app.');
  }
}

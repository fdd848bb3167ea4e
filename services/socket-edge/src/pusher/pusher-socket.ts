import { keyUseDeadline } from '@herald/access';
import { type PusherApp, SERVER_TO_USER_PREFIX, type VerifiedKey } from '@herald/proto';
import { type RawData, WebSocket } from 'ws';
import { type Deadline, socketDeadlines } from '../socket/deadlines.js';
import type { Heartbeating } from '../socket/heartbeat.js';
import type { AppGrant } from './app-lookup.js';
import type { ChannelMember } from './channel-fanout.js';
import type { MemberOwner, Membership } from './membership.js';
import type { PusherContext } from './pusher-context.js';
import { closeReason, connectionEstablished, errorFrame, PusherClose } from './pusher-frames.js';

/** pusher-js's own wait for a pong before it gives up on a connection, s (its `pongTimeout`). */
const PONG_GRACE_S = 30;

export interface PusherSocketInit {
  ws: WebSocket;
  socketId: string;
  grant: AppGrant;
  origin: string | undefined;
  /** The connect's MAX_SOCKETS slot and cap admission, given back once the socket closed. */
  hold: { release(): void };
  onClosed: (socket: PusherSocket) => void;
  /** Acts on a client frame (client-events.ts). */
  onFrame: (socket: PusherSocket, data: RawData, isBinary: boolean) => void;
}

/**
 * One Pusher connection (`/app/{key}`): its socket id, its app and bound key, its channels, the
 * user it signed in as, and its {@link Membership} of that user's recipient session. It owns the
 * WebSocket: the heartbeat (a WebSocket ping per HEARTBEAT_INTERVAL_MS, terminated when the last
 * went unanswered; closed 4201 when nothing was heard for activity_timeout + 30 s), the key's
 * use deadline (4003) and, for a key that requires recipient tokens, the sign-in deadline (4009).
 */
export class PusherSocket implements ChannelMember, Heartbeating, MemberOwner {
  readonly ws: WebSocket;
  readonly socketId: string;
  readonly origin: string | undefined;
  app: PusherApp;
  key: VerifiedKey;
  /** Channels subscribed, `#server-to-user-<id>` included. */
  readonly channels = new Set<string>();
  /** The user of a successful `pusher:signin`. */
  signedIn: { id: string } | undefined;
  member: Membership | undefined;
  heartbeatSlot: number | undefined;
  readonly #ctx: PusherContext;
  readonly #hold: { release(): void };
  readonly #onClosed: (socket: PusherSocket) => void;
  readonly #onFrame: PusherSocketInit['onFrame'];
  #alive = true;
  #lastHeard = Date.now();
  #closed = false;
  #expiry: Deadline | undefined;
  #signinDeadline: NodeJS.Timeout | undefined;

  constructor(ctx: PusherContext, init: PusherSocketInit) {
    this.#ctx = ctx;
    this.ws = init.ws;
    this.socketId = init.socketId;
    this.origin = init.origin;
    this.app = init.grant.app;
    this.key = init.grant.key;
    this.#hold = init.hold;
    this.#onClosed = init.onClosed;
    this.#onFrame = init.onFrame;
  }

  get account(): string {
    return this.app.account_id;
  }

  get open(): boolean {
    return !this.#closed && this.ws.readyState === WebSocket.OPEN;
  }

  /** Sends `pusher:connection_established` and starts reading the client's frames. */
  start(): void {
    const { ws } = this;
    ws.on('pong', () => this.#heard());
    ws.on('message', (data, isBinary) => {
      this.#heard();
      this.#onFrame(this, data, isBinary);
    });
    ws.on('close', () => this.#gone());
    this.send(connectionEstablished(this.socketId, this.#ctx.activityTimeoutS));
    this.#armExpiry();
    if (this.key.require_token === true) {
      this.#signinDeadline = setTimeout(() => {
        if (!this.member) {
          this.#ctx.metrics.rejections.inc({ code: 'missing_token' });
          this.refuse(
            PusherClose.unauthorized,
            'This app requires signed-in users: call pusher.signin() (or subscribe your user channel) within the timeout',
          );
        }
      }, this.#ctx.signinTimeoutMs);
      this.#signinDeadline.unref();
    }
  }

  /** A text frame (a Buffer is sent as text too: its bytes are a frame's UTF-8). */
  send(frame: string | Buffer): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(frame, { binary: false });
  }

  /** `pusher:error` with the code and message, then the close with that code. */
  refuse(code: number, message: string): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(errorFrame(code, message));
    this.ws.close(code, closeReason(message));
    this.#closed = true;
  }

  /**
   * The channel a recipient's event goes out on to this socket: the envelope's if subscribed to
   * it, else `#server-to-user-<id>` once signed in, else the user channel it joined through.
   */
  channelFor(envelopeChannel: string | undefined, member: Membership): string {
    if (envelopeChannel !== undefined && this.channels.has(envelopeChannel)) return envelopeChannel;
    if (this.signedIn) return `${SERVER_TO_USER_PREFIX}${this.signedIn.id}`;
    return member.viaChannel ?? `${SERVER_TO_USER_PREFIX}${member.userId}`;
  }

  /** A re-lookup after an invalidation found the app and key still good: take their news. */
  refresh(grant: AppGrant): void {
    this.app = grant.app;
    this.key = grant.key;
    this.member?.socket?.refreshKey(grant.key);
    this.#expiry?.cancel();
    if (!this.#closed) this.#armExpiry();
  }

  heartbeat(): void {
    if (this.#closed) return;
    if (Date.now() - this.#lastHeard > (this.#ctx.activityTimeoutS + PONG_GRACE_S) * 1000) {
      this.#ctx.metrics.rejections.inc({ code: 'no_pong' });
      this.refuse(PusherClose.noPong, 'Pong reply not received in time');
      return;
    }
    if (!this.#alive) {
      this.ws.terminate();
      return;
    }
    this.#alive = false;
    if (this.ws.readyState === WebSocket.OPEN) this.ws.ping();
  }

  #heard(): void {
    this.#alive = true;
    this.#lastHeard = Date.now();
  }

  #gone(): void {
    this.#closed = true;
    this.#expiry?.cancel();
    clearTimeout(this.#signinDeadline);
    for (const channel of this.channels) {
      if (!channel.startsWith('#'))
        this.#ctx.fanout.leave(this.account, this.app.app_id, channel, this);
    }
    this.#hold.release();
    this.#onClosed(this);
  }

  /** Closed 4003 when the bound key expires or the account's plan lapses. */
  #armExpiry(): void {
    const deadline = keyUseDeadline(this.key);
    if (deadline === null) return;
    // On the edge's shared deadline timer, not a setTimeout of this socket's own (deadlines.ts).
    this.#expiry = socketDeadlines.at(deadline, () => {
      this.#ctx.metrics.rejections.inc({ code: 'key_expired' });
      this.refuse(
        PusherClose.appDisabled,
        'The app is disabled: its key expired or its plan lapsed',
      );
    });
  }
}

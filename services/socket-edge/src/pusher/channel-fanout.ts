import type { Logger } from '@herald/kit';
import { PusherChannelMessage, pusherSubjects } from '@herald/proto';
import type { NatsConnection, Subscription } from 'nats';
import { decodeNotice } from '../session/notices.js';
import { channelEvent } from './pusher-frames.js';

/** A Pusher socket subscribed to a channel: its socket id and how to write it a frame. */
export interface ChannelMember {
  readonly socketId: string;
  send(frame: string): void;
}

interface Subscribed {
  sub: Subscription;
  members: Set<ChannelMember>;
  /** Settles once nats-server has the subscription (a flush after it): then a publish reaches it. */
  ready: Promise<void>;
}

/**
 * The live fan-out of Pusher channels on this edge: ONE NATS subscription per (account, app,
 * channel), `rt.pch.<a>.<app>.<base64url(channel)>`, made for its first socket and dropped with its
 * last. A message is written to every subscribed socket but the one whose socket id it names (the
 * publisher's, as Pusher skips it), the frame built once. At most once: nothing is stored or
 * proven, as with Pusher.
 */
export class ChannelFanout {
  readonly #nc: NatsConnection;
  readonly #logger: Logger;
  readonly #channels = new Map<string, Subscribed>();

  constructor(nc: NatsConnection, logger: Logger) {
    this.#nc = nc;
    this.#logger = logger;
  }

  /** Channels with at least one socket on this edge. */
  get size(): number {
    return this.#channels.size;
  }

  /**
   * Adds the socket to the channel; the promise settles once the edge's subscription is known to
   * nats-server, so `subscription_succeeded` sent after it promises that a `trigger` the app makes
   * on seeing it reaches the socket (a failed flush is logged and settles it too: at most once).
   */
  join(account: string, appId: string, channel: string, member: ChannelMember): Promise<void> {
    const subject = pusherSubjects.channel(account, appId, channel);
    let subscribed = this.#channels.get(subject);
    if (!subscribed) {
      const members = new Set<ChannelMember>();
      const sub = this.#nc.subscribe(subject, {
        callback: (err, msg) => {
          if (err) return;
          const message = decodeNotice(PusherChannelMessage, msg.data);
          if (!message) {
            this.#logger.warn(
              { subject: msg.subject },
              'ignoring malformed Pusher channel message',
            );
            return;
          }
          // The channel is the subscription's: the subject names it, whatever the body says.
          const frame = channelEvent(message.event, channel, message.data);
          for (const m of [...members]) if (m.socketId !== message.socket_id) m.send(frame);
        },
      });
      const ready = this.#nc.flush().catch((err: unknown) => {
        this.#logger.warn({ err: String(err) }, 'could not flush a Pusher channel subscription');
      });
      subscribed = { sub, members, ready };
      this.#channels.set(subject, subscribed);
    }
    subscribed.members.add(member);
    return subscribed.ready;
  }

  leave(account: string, appId: string, channel: string, member: ChannelMember): void {
    const subject = pusherSubjects.channel(account, appId, channel);
    const subscribed = this.#channels.get(subject);
    if (!subscribed) return;
    subscribed.members.delete(member);
    if (subscribed.members.size > 0) return;
    subscribed.sub.unsubscribe();
    this.#channels.delete(subject);
  }
}

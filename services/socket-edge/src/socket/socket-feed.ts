import type { Delivery } from './delivery.js';
import type { EventFrames } from './framing.js';

/** A recipient notice after which something new may be stored: queued, or the inbox changed. */
export type FeedNotice = 'queued' | 'unread';

/**
 * How events reach one socket: every write of a live or queued event goes through its socket's
 * feed. A socket without a device is fed directly; a device socket's feed also catches up on what
 * its device has not proven and writes each event once (src/feed/).
 */
export interface SocketFeed {
  /**
   * Where the feed records its device's position (the source's and the device's); undefined when
   * it records none. The session starts a device's next feed once the previous one recorded.
   */
  readonly positionKey: string | undefined;
  /** Reads the device's position, after `before` (the same device's last record), and catches up. */
  start(before?: Promise<void>): Promise<void>;
  /** The drain hands the socket the queued event at stream sequence `seq`; false when not taken. */
  offer(seq: number, frames: EventFrames, delivery: Delivery): boolean;
  /** A live event for the socket; false when not taken. */
  take(frames: EventFrames, delivery: Delivery): boolean;
  /** Something may have been stored: after a notice of that kind, or (none) the session's re-check. */
  kick(notice?: FeedNotice): void;
  /** The socket is gone: resolves once the device's position is recorded. */
  stop(): Promise<void>;
}

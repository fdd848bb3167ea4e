import type { Delivery } from '../socket/delivery.js';
import type { EdgeSocket } from '../socket/edge-socket.js';
import type { EventFrames } from '../socket/framing.js';
import type { SocketFeed } from '../socket/socket-feed.js';

const DONE = Promise.resolve();

/**
 * The feed of a socket without a device: every event is written to it as it comes, live and
 * drained alike, with no position and nothing to catch up on.
 */
export class DirectFeed implements SocketFeed {
  readonly #socket: EdgeSocket;

  constructor(socket: EdgeSocket) {
    this.#socket = socket;
  }

  /** It records no position (a getter: no field on every idle socket). */
  get positionKey(): undefined {
    return undefined;
  }

  start(): Promise<void> {
    return DONE;
  }

  offer(_seq: number, frames: EventFrames, delivery: Delivery): boolean {
    return this.#socket.write(frames, delivery);
  }

  take(frames: EventFrames, delivery: Delivery): boolean {
    return this.#socket.write(frames, delivery);
  }

  kick(): void {}

  stop(): Promise<void> {
    return DONE;
  }
}

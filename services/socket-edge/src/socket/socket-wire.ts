import type { HeraldError } from '@herald/proto';
import type { EventFrames } from './framing.js';

/**
 * A socket's own wire protocol, for a socket that did not connect through `/ws/connect` (the
 * Pusher wing's: src/pusher/). It frames each event for its socket and carries the proof of
 * receipt in-band: after a tick's frames the socket asks it for a proof ping, and the protocol
 * tells the socket when the client answered it ({@link EdgeSocket.proofAnswered}), which proves
 * every frame written before that ping. Everything else (the proof ledger, slow-reader caps,
 * live replies, queue acks, device feeds) stays the socket's, unchanged. A socket with a wire
 * leaves its heartbeat and its key's re-verification to the protocol's connection, which owns
 * the WebSocket.
 */
export interface SocketWire {
  /** This socket's frame of an event, and its size in bytes (for the slow-reader caps). */
  frame(frames: EventFrames): { data: string | Buffer; bytes: number };
  /** Sends the in-band proof ping that follows a tick's frames (one out at a time). */
  sendProofPing(): void;
  /** Closes the socket for a policy reason (an expired key, a lapsed plan), the protocol's way. */
  fail(err: HeraldError): void;
  /** The app terminated this recipient's connections of `appId` (`rt.pterm`): close if it is ours. */
  terminate(appId: string): void;
}

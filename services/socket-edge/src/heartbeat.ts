import type { EdgeSocket } from './edge-socket.js';

/**
 * Pings every socket each `intervalMs`; a socket that did not answer the previous ping is
 * terminated, so half-open connections (a phone that lost its network) free their slot and their
 * session. Returns the function that stops it.
 */
export function startHeartbeat(
  sockets: () => Iterable<EdgeSocket>,
  intervalMs: number,
): () => void {
  const timer = setInterval(() => {
    for (const socket of [...sockets()]) socket.heartbeat();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** What the heartbeat needs of a socket: one tick (terminate if the last ping went unanswered, else ping). */
export interface Heartbeating {
  heartbeat(): void;
  /**
   * The socket's slot, set by the heartbeat at its first tick. A field of the socket rather than a
   * WeakMap entry: the map's entries cost more than the number, for every socket held.
   */
  heartbeatSlot?: number | undefined;
}

/**
 * Pings every socket once per `intervalMs`; a socket that did not answer the previous ping is
 * terminated, so half-open connections (a phone that lost its network) free their slot and their
 * session. The work is spread over the interval: each socket gets a fixed slot among `slices`
 * (one per second of the interval, at most 30), and each tick pings one slot only, so many
 * sockets cost a steady share of pings every second rather than one stall per interval that
 * pings them all (which delayed every event due at that moment). Returns the function that stops
 * it.
 */
export function startHeartbeat(
  sockets: () => Iterable<Heartbeating>,
  intervalMs: number,
  slices = Math.min(30, Math.max(1, Math.floor(intervalMs / 1000))),
): () => void {
  let next = 0;
  let tick = 0;
  const timer = setInterval(
    () => {
      const current = tick++ % slices;
      for (const socket of [...sockets()]) {
        socket.heartbeatSlot ??= next++ % slices;
        if (socket.heartbeatSlot % slices === current) socket.heartbeat();
      }
    },
    Math.max(1, Math.floor(intervalMs / slices)),
  );
  timer.unref();
  return () => clearInterval(timer);
}

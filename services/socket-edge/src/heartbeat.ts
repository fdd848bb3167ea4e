/** What the heartbeat needs of a socket: one tick (terminate if the last ping went unanswered, else ping). */
export interface Heartbeating {
  heartbeat(): void;
}

/**
 * Pings every socket once per `intervalMs`; a socket that did not answer the previous ping is
 * terminated, so half-open connections (a phone that lost its network) free their slot and their
 * session. The work is spread over the interval: each socket gets a fixed slot among `slices`
 * (one per second of the interval, at most 30), and each tick pings one slot only, so 15,000
 * sockets cost ~500 pings a second rather than one 15,000-ping stall every 30 s (which delayed
 * every event due at that moment). Returns the function that stops it.
 */
export function startHeartbeat(
  sockets: () => Iterable<Heartbeating>,
  intervalMs: number,
  slices = Math.min(30, Math.max(1, Math.floor(intervalMs / 1000))),
): () => void {
  const slots = new WeakMap<Heartbeating, number>();
  let next = 0;
  let tick = 0;
  const timer = setInterval(
    () => {
      const current = tick++ % slices;
      for (const socket of [...sockets()]) {
        let slot = slots.get(socket);
        if (slot === undefined) {
          slot = next++ % slices;
          slots.set(socket, slot);
        }
        if (slot === current) socket.heartbeat();
      }
    },
    Math.max(1, Math.floor(intervalMs / slices)),
  );
  timer.unref();
  return () => clearInterval(timer);
}

import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';

/** Transports corked until the end of the current tick. */
const corked = new WeakSet<Duplex>();

/**
 * Holds a WebSocket's writes until the end of the current tick, so the frames of a drain burst
 * (every queued event nats.js hands over from one read) leave in one TLS write instead of one
 * TLS record and one syscall each, a cost the drain would otherwise pay per frame. The frames'
 * order is unchanged; they are only sent together.
 *
 * `ws` keeps its transport on `_socket` (not in its types); without it nothing is corked. Corks
 * once per tick however many frames are written, and uncorks on `process.nextTick`, which runs
 * once the callback that delivered the burst (and the microtasks it queued) returns.
 */
export function corkForTick(ws: WebSocket): void {
  const transport = (ws as unknown as { _socket?: Duplex })._socket;
  if (!transport || transport.destroyed || corked.has(transport)) return;
  corked.add(transport);
  transport.cork();
  process.nextTick(() => {
    corked.delete(transport);
    transport.uncork();
  });
}

/**
 * Corks a WebSocket's transport now and, at the end of the current tick (`process.nextTick`),
 * calls `last(arg)` (a write that should join the tick's frames, such as plain framing's proof
 * ping), then uncorks: every frame written to the socket in this tick and `last`'s leave in one
 * TLS write. The caller calls it at most once per tick per socket. A cork taken by
 * {@link corkForTick} in the same tick is counted separately (cork() nests), so the write
 * happens at whichever uncork comes last.
 */
export function corkUntilTickEnd<T>(ws: WebSocket, last: (arg: T) => void, arg: T): void {
  const transport = (ws as unknown as { _socket?: Duplex })._socket;
  const held = transport !== undefined && !transport.destroyed ? transport : undefined;
  held?.cork();
  process.nextTick(endTick<T>, held, last, arg);
}

function endTick<T>(held: Duplex | undefined, last: (arg: T) => void, arg: T): void {
  try {
    last(arg);
  } finally {
    held?.uncork();
  }
}

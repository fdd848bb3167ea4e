import type { WebSocketConstructor } from '@herald/sdk';
import { Agent, fetch as undiciFetch } from 'undici';
import WebSocket from 'ws';

/** What one SDK socket saw on the wire: every text frame, in order. */
export interface WireLog {
  socket: WebSocket;
  frames: Array<{ type: string; id?: string }>;
}

/**
 * The SDK's injection points wired to trust the stack's throwaway CA: a `ws` subclass that adds
 * `{ ca }` (what a Node user with a private CA does) and undici's fetch with an Agent that does
 * the same. The subclass also records each socket and its frames, so a test can prove a
 * redelivery really happened on the wire, and kill a socket at a chosen moment.
 */
export function tlsRuntime(ca: string) {
  const wire: WireLog[] = [];
  class CaWebSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { ca });
      const log: WireLog = { socket: this, frames: [] };
      wire.push(log);
      this.on('message', (data) => log.frames.push(JSON.parse(data.toString())));
    }
  }
  const agent = new Agent({ connect: { ca } });
  const fetch: typeof globalThis.fetch = (input, init) =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], {
      ...(init as Parameters<typeof undiciFetch>[1]),
      dispatcher: agent,
    }) as unknown as Promise<Response>;
  const WebSocketCtor: WebSocketConstructor = CaWebSocket;
  return {
    WebSocket: WebSocketCtor,
    fetch,
    wire,
    /** Every event id seen on the wire, over all sockets, in order. */
    wireEventIds: () =>
      wire.flatMap((w) => w.frames.filter((f) => f.type === 'event').map((f) => f.id)),
    close: () => agent.close(),
  };
}

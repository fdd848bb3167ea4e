import type { WebSocketConstructor } from '@herald/sdk';
import { Agent, fetch as undiciFetch } from 'undici';
import WebSocket from 'ws';

/** What one SDK socket saw on the wire: every text frame, in order, and what the SDK sent. */
export interface WireLog {
  socket: WebSocket;
  frames: Array<{ type: string; id?: string; events?: Array<{ id: string }> }>;
  sent: string[];
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
    readonly #log: WireLog;
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { ca });
      const log: WireLog = { socket: this, frames: [], sent: [] };
      this.#log = log;
      wire.push(log);
      this.on('message', (data) => log.frames.push(JSON.parse(data.toString())));
    }

    /** The SDK sends text only (acks, tokens, inbox requests). */
    override send(data: string): void {
      this.#log.sent.push(data);
      super.send(data);
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
    /** Every event id seen on the wire, over all sockets, in order: `events` frames' too. */
    wireEventIds: () =>
      wire.flatMap((w) =>
        w.frames.flatMap((f) =>
          f.type === 'event'
            ? [f.id]
            : f.type === 'events'
              ? (f.events ?? []).map((e) => e.id)
              : [],
        ),
      ),
    close: () => agent.close(),
  };
}

import { io, type Socket } from 'socket.io-client';
import type { ClientTls } from './client-tls.js';
import type { SourceAddresses } from './source-addresses.js';
import { growFleet, type OpenOutcome } from './ws-fleet.js';

export interface SioFleetOptions {
  origin: string;
  recipient: (i: number) => string;
  tls: ClientTls;
  addresses: SourceAddresses;
  concurrency: number;
  handshakeTimeoutMs: number;
  /** Called with every `event` socket i receives. */
  onEvent?: (i: number, payload: unknown) => void;
}

/**
 * The Socket.IO counterpart of WsFleet (Socket.IO needs its own client): socket.io-client 4.8,
 * websocket transport only, one Manager per socket (forceNew, as separate users would have), no
 * reconnection, no compression, same CA, source addresses and handshake bound as WsFleet.
 */
export class SioFleet {
  readonly sockets: Array<Socket | undefined> = [];
  unexpectedCloses = 0;
  #closing = false;
  readonly #opts: SioFleetOptions;

  constructor(opts: SioFleetOptions) {
    this.#opts = opts;
  }

  get size(): number {
    return this.sockets.length;
  }

  grow(count: number): Promise<OpenOutcome> {
    return growFleet(this.sockets, count, this.#opts.concurrency, (i) => this.#open(i));
  }

  #open(i: number): Promise<Socket> {
    const o = this.#opts;
    return new Promise((resolve, reject) => {
      const options: Parameters<typeof io>[1] = {
        transports: ['websocket'],
        forceNew: true,
        reconnection: false,
        timeout: o.handshakeTimeoutMs,
        query: { recipient: o.recipient(i) },
        agent: o.tls.agent as unknown as string,
        // engine.io-client types this as {threshold}, but hands it to ws, which takes false.
        perMessageDeflate: false as unknown as { threshold: number },
      };
      // engine.io-client passes localAddress through to ws; its types just do not list it. (The
      // agent is typed as a string for the browser build; in Node it is handed to ws as is.)
      Object.assign(options, { localAddress: o.addresses.next() });
      const socket = io(o.origin, options);
      const onEvent = o.onEvent;
      if (onEvent) socket.on('event', (payload: unknown) => onEvent(i, payload));
      socket.once('connect', () => {
        socket.off('connect_error');
        socket.once('disconnect', () => {
          if (!this.#closing) this.unexpectedCloses++;
        });
        resolve(socket);
      });
      socket.once('connect_error', (err) => {
        socket.close();
        reject(err);
      });
    });
  }

  async close(): Promise<void> {
    this.#closing = true;
    for (const s of this.sockets) s?.disconnect();
    this.sockets.length = 0;
    await new Promise((r) => setTimeout(r, 200));
  }
}

import type WebSocket from 'ws';
import type { CentrifugoServer } from '../env/centrifugo-server.js';
import { type ConnectReply, connectCommand, readFrame } from '../figures/centrifugo-wire.js';
import type { ClientTls } from './client-tls.js';
import type { SourceAddresses } from './source-addresses.js';
import { WsFleet } from './ws-fleet.js';

export interface CentrifugoFleetOptions {
  server: CentrifugoServer;
  recipient: (i: number) => string;
  /** Connect with `recover: true, offset: 0, epoch: ""`: replay what was stored while away. */
  recover: boolean;
  tls: ClientTls;
  addresses: SourceAddresses;
  concurrency: number;
  handshakeTimeoutMs: number;
  /** Called with the data of every publication socket i receives, live or replayed. */
  onPublication?: (i: number, data: unknown) => void;
  onOpen?: (i: number) => void;
}

/**
 * A WsFleet speaking Centrifugo's bidirectional JSON protocol: each socket sends its connect
 * command (JWT, and the recovery request when asked) and counts as open once the reply came,
 * when the server has subscribed it to its personal channel; it answers the server's pings as
 * every client must, so idle sockets stay connected. The same ws client, TLS context, source
 * addresses and bounds as Herald's fleets.
 */
export function centrifugoFleet(o: CentrifugoFleetOptions): WsFleet {
  const pending = new Map<number, (reply: ConnectReply | Error) => void>();
  return new WsFleet({
    url: () => o.server.wsUrl,
    tls: o.tls,
    addresses: o.addresses,
    concurrency: o.concurrency,
    handshakeTimeoutMs: o.handshakeTimeoutMs,
    ...(o.onOpen ? { onOpen: o.onOpen } : {}),
    onMessage: (i: number, data: Buffer, ws: WebSocket) =>
      readFrame(
        data,
        (text) => ws.send(text),
        (pub) => o.onPublication?.(i, pub),
        (reply) => {
          pending.get(i)?.(reply);
          pending.delete(i);
        },
      ),
    handshake: (i, ws) =>
      new Promise<void>((resolve, reject) => {
        pending.set(i, (reply) => (reply instanceof Error ? reject(reply) : resolve()));
        ws.once('close', (code, reason) =>
          reject(new Error(`closed during connect: ${code} ${reason.toString()}`)),
        );
        ws.send(connectCommand(o.server, o.recipient(i), o.recover));
      }),
  });
}

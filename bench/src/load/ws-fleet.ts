import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import type { ClientTls } from './client-tls.js';
import type { SourceAddresses } from './source-addresses.js';

export interface FleetOptions {
  /** The URL socket i connects to. */
  url: (i: number) => string;
  protocols?: string[];
  tls: ClientTls;
  addresses: SourceAddresses;
  /** Handshakes in flight at once. */
  concurrency: number;
  /** A handshake slower than this fails, ms. */
  handshakeTimeoutMs: number;
  /** Called when socket i opened (its upgrade completed). */
  onOpen?: (i: number) => void;
  /** Called with every frame socket i receives. */
  onMessage?: (i: number, data: Buffer, ws: WebSocket) => void;
  /**
   * A protocol's own handshake after the upgrade (Centrifugo's connect command and its reply):
   * the socket counts as opened once it resolves, within the same handshake bound.
   */
  handshake?: (i: number, ws: WebSocket) => Promise<void>;
}

export interface OpenOutcome {
  opened: number;
  failed: number;
  elapsedMs: number;
  /** Handshakes per second over the whole batch. */
  acceptRate: number;
  firstError?: string;
}

/**
 * Opens sockets `slots.length .. +count-1` with at most `concurrency` handshakes in flight, storing
 * each at its index (a failed one leaves a hole), and reports how it went.
 */
export async function growFleet<T>(
  slots: Array<T | undefined>,
  count: number,
  concurrency: number,
  open: (i: number) => Promise<T>,
): Promise<OpenOutcome> {
  const first = slots.length;
  slots.length = first + count;
  const start = performance.now();
  let next = first;
  let opened = 0;
  let failed = 0;
  let firstError: string | undefined;
  const worker = async () => {
    while (next < first + count) {
      const i = next++;
      try {
        slots[i] = await open(i);
        opened++;
      } catch (err) {
        failed++;
        firstError ??= err instanceof Error ? err.message : String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  const elapsedMs = performance.now() - start;
  return {
    opened,
    failed,
    elapsedMs,
    acceptRate: opened / (elapsedMs / 1000),
    ...(firstError === undefined ? {} : { firstError }),
  };
}

/**
 * The one WebSocket client every ws scenario uses (Herald's edge and the raw ws baseline): the
 * `ws` package, no compression offered, TLS trusting the run's CA, source addresses spread over
 * loopback, handshakes bounded in flight. Sockets are kept by index so scenarios can address them.
 */
export class WsFleet {
  readonly sockets: Array<WebSocket | undefined> = [];
  /** Sockets that closed after opening (server closes, slow-consumer kicks). */
  unexpectedCloses = 0;
  /** Those closes by code and reason (Centrifugo's say why it disconnected: 3010, 3012, ...). */
  readonly closeReasons = new Map<string, number>();
  #closing = false;
  readonly #opts: FleetOptions;

  constructor(opts: FleetOptions) {
    this.#opts = opts;
  }

  get size(): number {
    return this.sockets.length;
  }

  /** Opens `count` more sockets (indexes size..size+count-1). */
  grow(count: number): Promise<OpenOutcome> {
    return growFleet(this.sockets, count, this.#opts.concurrency, (i) => this.#open(i));
  }

  #open(i: number): Promise<WebSocket> {
    const o = this.#opts;
    return new Promise((resolve, reject) => {
      // ws hands every option to tls.connect; its types just do not list secureContext.
      const options: WebSocket.ClientOptions & { secureContext: unknown } = {
        secureContext: o.tls.secureContext,
        localAddress: o.addresses.next(),
        perMessageDeflate: false,
        handshakeTimeout: o.handshakeTimeoutMs,
      };
      const ws = new WebSocket(o.url(i), o.protocols ?? [], options);
      const onMessage = o.onMessage;
      if (onMessage) ws.on('message', (data: Buffer) => onMessage(i, data, ws));
      ws.once('open', () => {
        const opened = () => {
          o.onOpen?.(i);
          ws.off('error', reject);
          ws.on('error', () => {});
          ws.once('close', (code: number, reason: Buffer) => {
            if (this.#closing) return;
            this.unexpectedCloses++;
            const why = `${code}${reason.length > 0 ? ` ${reason.toString().slice(0, 80)}` : ''}`;
            this.closeReasons.set(why, (this.closeReasons.get(why) ?? 0) + 1);
          });
          resolve(ws);
        };
        if (!o.handshake) return opened();
        const timer = setTimeout(() => {
          reject(new Error(`protocol handshake took over ${o.handshakeTimeoutMs} ms`));
          ws.terminate();
        }, o.handshakeTimeoutMs);
        o.handshake(i, ws).then(
          () => {
            clearTimeout(timer);
            opened();
          },
          (err: unknown) => {
            clearTimeout(timer);
            reject(err);
            ws.terminate();
          },
        );
      });
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => {
        reject(new Error(`upgrade refused with HTTP ${res.statusCode}`));
        ws.terminate();
      });
    });
  }

  /** Drops every socket (no close handshake) and waits until they are all closed. */
  async close(): Promise<void> {
    this.#closing = true;
    const closed = this.sockets.map((ws) =>
      ws && ws.readyState !== WebSocket.CLOSED
        ? new Promise<void>((r) => ws.once('close', () => r()))
        : Promise.resolve(),
    );
    for (const ws of this.sockets) ws?.terminate();
    await Promise.race([Promise.all(closed), new Promise((r) => setTimeout(r, 10_000))]);
    this.sockets.length = 0;
  }
}

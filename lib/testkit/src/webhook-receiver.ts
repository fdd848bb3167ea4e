import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { makeCerts } from './certs.js';

/** One webhook request a {@link WebhookReceiver} got. */
export interface WebhookArrival {
  /** The Standard Webhooks headers, as sent. */
  headers: { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string };
  /** The body's text, as sent (a verifier needs its exact bytes). */
  body: string;
}

/** Where a {@link WebhookReceiver} listens when not on 127.0.0.1 with a CA of its own. */
export interface WebhookReceiverOptions {
  /** The IPv4 address to listen on, which its URLs name. Default 127.0.0.1. */
  host?: string;
  /** A certificate for `host` and the CA that signed it (the compose soak's receiver CA). */
  tls?: { key: string; cert: string; caFile: string };
}

/**
 * A real HTTPS webhook receiver on 127.0.0.1 with a throwaway CA of its own (the status service
 * trusts it through WEBHOOK_CA_FILE), or on an address and certificate the caller gives (the
 * compose soak: the Docker host's gateway address), recording every request by path and answering each path
 * with the status the test set (200 unless told). For the surfaces' tests (admin CLI, account
 * API, dashboard); the status service's own tests drive failures and hangs with theirs.
 */
export class WebhookReceiver {
  readonly #caFile: string;
  readonly #host: string;
  readonly #arrivals = new Map<string, WebhookArrival[]>();
  readonly #status = new Map<string, number>();
  readonly #server: https.Server;

  private constructor(tls: { key: string; cert: string; caFile: string }, host: string) {
    this.#caFile = tls.caFile;
    this.#host = host;
    this.#server = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
      const path = req.url ?? '/';
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const h = req.headers;
        const list = this.#arrivals.get(path) ?? [];
        list.push({
          headers: {
            'webhook-id': String(h['webhook-id']),
            'webhook-timestamp': String(h['webhook-timestamp']),
            'webhook-signature': String(h['webhook-signature']),
          },
          body: Buffer.concat(chunks).toString('utf8'),
        });
        this.#arrivals.set(path, list);
        res.writeHead(this.#status.get(path) ?? 200);
        res.end();
      });
    });
  }

  static async start(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
    let tls = options.tls;
    if (!tls) {
      const c = await makeCerts();
      tls = {
        key: readFileSync(c.keyFile, 'utf8'),
        cert: readFileSync(c.certFile, 'utf8'),
        caFile: c.caFile,
      };
    }
    const receiver = new WebhookReceiver(tls, options.host ?? '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      receiver.#server.once('error', reject);
      receiver.#server.listen(0, receiver.#host, () => resolve());
    });
    return receiver;
  }

  /** The CA the receiver's certificate chains to: the status service's WEBHOOK_CA_FILE. */
  get caFile(): string {
    return this.#caFile;
  }

  /** The URL of `path` (by name on 127.0.0.1: the test certificate is for localhost). */
  url(path: string): string {
    const host = this.#host === '127.0.0.1' ? 'localhost' : this.#host;
    return `https://${host}:${(this.#server.address() as AddressInfo).port}${path}`;
  }

  /** Answers every later request to `path` with `status`. */
  answer(path: string, status: number): void {
    this.#status.set(path, status);
  }

  /** Every request `path` got, in order. */
  at(path: string): WebhookArrival[] {
    return this.#arrivals.get(path) ?? [];
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

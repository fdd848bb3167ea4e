import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { makeCerts, type TestCerts } from './certs.js';

/** One webhook request a {@link WebhookReceiver} got. */
export interface WebhookArrival {
  /** The Standard Webhooks headers, as sent. */
  headers: { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string };
  /** The body's text, as sent (a verifier needs its exact bytes). */
  body: string;
}

/**
 * A real HTTPS webhook receiver on 127.0.0.1 with a throwaway CA of its own (the status service
 * trusts it through WEBHOOK_CA_FILE), recording every request by path and answering each path
 * with the status the test set (200 unless told). For the surfaces' tests (admin CLI, account
 * API, dashboard); the status service's own tests drive failures and hangs with theirs.
 */
export class WebhookReceiver {
  readonly certs: TestCerts;
  readonly #arrivals = new Map<string, WebhookArrival[]>();
  readonly #status = new Map<string, number>();
  readonly #server: https.Server;

  private constructor(certs: TestCerts) {
    this.certs = certs;
    this.#server = https.createServer(
      { cert: readFileSync(certs.certFile), key: readFileSync(certs.keyFile) },
      (req, res) => {
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
      },
    );
  }

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(await makeCerts());
    await new Promise<void>((resolve, reject) => {
      receiver.#server.once('error', reject);
      receiver.#server.listen(0, '127.0.0.1', () => resolve());
    });
    return receiver;
  }

  /** The CA the receiver's certificate chains to: the status service's WEBHOOK_CA_FILE. */
  get caFile(): string {
    return this.certs.caFile;
  }

  /** The URL of `path` (by name: the test certificate is for localhost). */
  url(path: string): string {
    return `https://localhost:${(this.#server.address() as AddressInfo).port}${path}`;
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

import { readFileSync } from 'node:fs';
import type http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { makeCerts, type TestCerts } from '@herald/testkit';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';

/** One request the receiver got. */
export interface Arrival {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** Epoch ms it arrived. */
  at: number;
  /** Which arrival of this webhook-id it is, from 1. */
  nth: number;
}

/** What the receiver answers: a status (and headers), or never (the request hangs). */
export type Answer =
  | { status: number; headers?: Record<string, string>; delayMs?: number }
  | 'hang';

/**
 * A real HTTPS webhook receiver with its own CA (the status service trusts it through
 * WEBHOOK_CA_FILE), recording every request and answering as the test says, by path.
 */
export class Receiver {
  readonly certs: TestCerts;
  readonly arrivals = new Map<string, Arrival[]>();
  /** Per path; a path without one answers 200. */
  readonly behave = new Map<string, (a: Arrival) => Answer>();
  /** Requests held open right now, per path, and the most at once. */
  readonly hanging = new Map<string, Set<http.ServerResponse>>();
  readonly maxHanging = new Map<string, number>();
  #server: https.Server | undefined;
  #port = 0;

  private constructor(certs: TestCerts) {
    this.certs = certs;
  }

  static async start(): Promise<Receiver> {
    const r = new Receiver(await makeCerts());
    await r.up();
    return r;
  }

  get caFile(): string {
    return this.certs.caFile;
  }

  /** The URL of `path` on this receiver (by name: localhost resolves to 127.0.0.1). */
  url(path: string): string {
    return `https://localhost:${this.#port}${path}`;
  }

  /** (Re)starts listening, on the same port as before when there was one. */
  async up(): Promise<void> {
    const server = https.createServer(
      { cert: readFileSync(this.certs.certFile), key: readFileSync(this.certs.keyFile) },
      (req, res) => this.#handle(req, res),
    );
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, '127.0.0.1', () => resolve());
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  /** Stops listening and drops every connection: the endpoint is down. */
  async down(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    for (const set of this.hanging.values()) set.clear();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Every arrival of `path`, in order. */
  at(path: string): Arrival[] {
    return this.arrivals.get(path) ?? [];
  }

  /** The distinct webhook-ids `path` received. */
  ids(path: string): Set<string> {
    return new Set(this.at(path).map((a) => a.id));
  }

  #handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = req.url ?? '/';
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const list = this.arrivals.get(path) ?? [];
      const id = String(req.headers['webhook-id']);
      const arrival: Arrival = {
        id,
        timestamp: String(req.headers['webhook-timestamp']),
        signature: String(req.headers['webhook-signature']),
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
        nth: list.filter((a) => a.id === id).length + 1,
      };
      list.push(arrival);
      this.arrivals.set(path, list);
      const answer = this.behave.get(path)?.(arrival) ?? { status: 200 };
      if (answer === 'hang') {
        const set = this.hanging.get(path) ?? new Set();
        set.add(res);
        this.hanging.set(path, set);
        this.maxHanging.set(path, Math.max(this.maxHanging.get(path) ?? 0, set.size));
        res.on('close', () => set.delete(res));
        return;
      }
      const send = () => {
        res.writeHead(answer.status, answer.headers ?? {});
        res.end('ok');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  }

  async stop(): Promise<void> {
    await this.down();
  }
}

/**
 * Verifies an arrival with the Standard Webhooks reference library and with Svix's verifier (not
 * with Herald's code); returns the parsed body. Throws when either refuses it.
 */
export function verified(secret: string, a: Arrival): unknown {
  const headers = {
    'webhook-id': a.id,
    'webhook-timestamp': a.timestamp,
    'webhook-signature': a.signature,
  };
  const body = new StandardWebhook(secret).verify(a.body, headers);
  new SvixWebhook(secret).verify(a.body, headers);
  return body;
}

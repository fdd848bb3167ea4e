import { createECDH, type ECDH, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import ece from 'http_ece';
import { importJWK, jwtVerify } from 'jose';
import { makeCerts, type TestCerts } from './certs.js';

/** A Web Push subscription as a browser's `PushSubscription.toJSON()` gives it. */
export interface TestWebPushSubscription {
  endpoint: string;
  expirationTime: null;
  keys: { p256dh: string; auth: string };
}

/** One request the push service got, decrypted and checked. */
export interface PushArrival {
  /** The subscription's id (the endpoint's last segment). */
  id: string;
  /** Epoch ms it arrived. */
  at: number;
  /** What the service answered. */
  status: number;
  ttl: string | undefined;
  topic: string | undefined;
  urgency: string | undefined;
  contentEncoding: string | undefined;
  /** The decrypted plaintext parsed as JSON; undefined when the body did not decrypt. */
  message: unknown;
  /** Why the body did not decrypt, or why the VAPID header did not verify; null when both did. */
  error: string | null;
  /** The VAPID JWT's claims, verified (ES256 against `k`, aud = origin, exp within 24 h, sub). */
  vapid: { aud: string; exp: number; sub: string; k: string } | undefined;
}

interface Subscriber {
  ecdh: ECDH;
  auth: Buffer;
  /** Statuses to answer next, in order (then 201). */
  script: Array<{ status: number; headers?: Record<string, string> }>;
}

const DAY_S = 24 * 3600;

/** Where a push service listens and with what certificate (default: 127.0.0.1, a CA of its own). */
export interface PushServiceOptions {
  /** The IPv4 address to listen on, which subscriptions' endpoints name. Default 127.0.0.1. */
  host?: string;
  /** A certificate for `host` and the CA that signed it (the container tests' receiver CA). */
  tls?: { key: string; cert: string; caFile: string };
}

/**
 * A real HTTPS Web Push service on 127.0.0.1 with a throwaway CA (the status service trusts it
 * through PUSH_CA_FILE), or on an address and certificate the caller gives (the container tests:
 * the Docker host's gateway address). It makes subscriptions as a user agent would (a P-256 key pair and a
 * 16-byte auth secret), decrypts every push with them (RFC 8291 aes128gcm, http_ece), verifies its
 * VAPID header with jose (RFC 8292), records it, and answers 201 unless told otherwise.
 */
export class PushService {
  /** The CA the push service's certificate chains to: its file, and its PEM for test clients. */
  readonly certs: Pick<TestCerts, 'caFile' | 'ca'>;
  readonly #subs = new Map<string, Subscriber>();
  readonly #arrivals: PushArrival[] = [];
  readonly #server: https.Server;
  /** How long every answer waits, ms (a slow push service). */
  delayMs = 0;

  private constructor(
    tls: { key: string; cert: string; caFile: string },
    readonly host: string,
  ) {
    this.certs = { caFile: tls.caFile, ca: readFileSync(tls.caFile, 'utf8') };
    this.#server = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void this.#arrive(req, Buffer.concat(chunks)).then(({ status, headers }) => {
          res.writeHead(status, headers);
          res.end();
        });
      });
    });
  }

  static async start(options: PushServiceOptions = {}): Promise<PushService> {
    let tls = options.tls;
    if (!tls) {
      const c = await makeCerts();
      tls = {
        key: readFileSync(c.keyFile, 'utf8'),
        cert: readFileSync(c.certFile, 'utf8'),
        caFile: c.caFile,
      };
    }
    const s = new PushService(tls, options.host ?? '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      s.#server.once('error', reject);
      s.#server.listen(0, s.host, () => resolve());
    });
    return s;
  }

  get caFile(): string {
    return this.certs.caFile;
  }

  get origin(): string {
    return `https://${this.host}:${(this.#server.address() as AddressInfo).port}`;
  }

  /** A new subscription, as a browser would post it. */
  subscribe(): TestWebPushSubscription {
    const id = randomUUID();
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    const auth = randomBytes(16);
    this.#subs.set(id, { ecdh, auth, script: [] });
    return {
      endpoint: `${this.origin}/push/${id}`,
      expirationTime: null,
      keys: {
        p256dh: ecdh.getPublicKey().toString('base64url'),
        auth: auth.toString('base64url'),
      },
    };
  }

  /** Answers the next `times` requests to `endpoint` with `status` (and headers). */
  answer(endpoint: string, status: number, times = 1, headers?: Record<string, string>): void {
    const sub = this.#subs.get(idOf(endpoint));
    if (!sub) throw new Error(`no subscription ${endpoint}`);
    for (let i = 0; i < times; i++) sub.script.push({ status, ...(headers ? { headers } : {}) });
  }

  /** Every request to `endpoint` (every request when none is named), in order. */
  arrivals(endpoint?: string): PushArrival[] {
    if (endpoint === undefined) return [...this.#arrivals];
    const id = idOf(endpoint);
    return this.#arrivals.filter((a) => a.id === id);
  }

  /** The arrivals the service accepted (2xx). */
  accepted(endpoint?: string): PushArrival[] {
    return this.arrivals(endpoint).filter((a) => a.status >= 200 && a.status < 300);
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #arrive(
    req: import('node:http').IncomingMessage,
    body: Buffer,
  ): Promise<{ status: number; headers?: Record<string, string> }> {
    const id = (req.url ?? '').replace(/^\/push\//, '');
    const sub = this.#subs.get(id);
    const header = (n: string) => {
      const v = req.headers[n];
      return Array.isArray(v) ? v[0] : v;
    };
    const arrival: PushArrival = {
      id,
      at: Date.now(),
      status: 404,
      ttl: header('ttl'),
      topic: header('topic'),
      urgency: header('urgency'),
      contentEncoding: header('content-encoding'),
      message: undefined,
      error: null,
      vapid: undefined,
    };
    if (!sub) {
      this.#arrivals.push(arrival);
      return { status: 404 };
    }
    const errors: string[] = [];
    if (body.length > 0) {
      try {
        const plain = ece.decrypt(body, {
          version: 'aes128gcm',
          privateKey: sub.ecdh,
          authSecret: sub.auth,
        });
        arrival.message = JSON.parse(plain.toString('utf8'));
      } catch (err) {
        errors.push(`decrypt: ${String(err)}`);
      }
    }
    try {
      arrival.vapid = await verifyVapid(header('authorization'), this.origin);
    } catch (err) {
      errors.push(`vapid: ${String(err)}`);
    }
    arrival.error = errors.length > 0 ? errors.join('; ') : null;
    const next = sub.script.shift() ?? { status: 201 };
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    arrival.status = next.status;
    // Recorded once checked, so a test that sees it sees it whole.
    this.#arrivals.push(arrival);
    return next;
  }
}

function idOf(endpoint: string): string {
  return endpoint.slice(endpoint.lastIndexOf('/') + 1);
}

/** RFC 8292: `vapid t=<ES256 JWT>, k=<uncompressed P-256 public key, base64url>`. */
async function verifyVapid(
  value: string | undefined,
  origin: string,
): Promise<NonNullable<PushArrival['vapid']>> {
  const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(value ?? '');
  if (!m) throw new Error(`not a vapid Authorization header: ${value}`);
  const [, t, k] = m as unknown as [string, string, string];
  const raw = Buffer.from(k, 'base64url');
  if (raw.length !== 65 || raw[0] !== 4) throw new Error('k is not an uncompressed P-256 key');
  const key = await importJWK(
    {
      kty: 'EC',
      crv: 'P-256',
      x: raw.subarray(1, 33).toString('base64url'),
      y: raw.subarray(33).toString('base64url'),
    },
    'ES256',
  );
  const { payload } = await jwtVerify(t, key, { algorithms: ['ES256'], audience: origin });
  const now = Math.floor(Date.now() / 1000);
  if (typeof payload.exp !== 'number' || payload.exp > now + DAY_S)
    throw new Error(`exp ${payload.exp} is not within 24 h`);
  if (typeof payload.sub !== 'string' || payload.sub === '') throw new Error('sub is missing');
  return { aud: origin, exp: payload.exp, sub: payload.sub, k };
}

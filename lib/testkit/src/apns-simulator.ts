import {
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  randomUUID,
} from 'node:crypto';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { decodeProtectedHeader, jwtVerify } from 'jose';

/** Apple's limit on a provider token's age. */
const TOKEN_MAX_AGE_S = 3600;

/** An APNs token key as Apple's developer site gives it (.p8), with its ids. */
export interface SimApnsKey {
  key_pem: string;
  key_id: string;
  team_id: string;
}

/** What the simulator answers a device token next (then 200). */
export interface ApnsAnswer {
  status: number;
  /** APNs' `reason`: `BadDeviceToken`, `Unregistered`, `TooManyRequests`, … */
  reason?: string;
  retryAfter?: string;
}

/** One push the simulator got, its provider token verified, with what it answered. */
export interface ApnsArrival {
  at: number;
  token: string;
  keyId: string;
  teamId: string;
  topic: string | undefined;
  pushType: string | undefined;
  collapseId: string | undefined;
  expiration: string | undefined;
  priority: string | undefined;
  payload: Record<string, unknown>;
  status: number;
}

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const appleId = () =>
  Array.from(randomBytes(10), (b) => ID_ALPHABET[b % ID_ALPHABET.length]).join('');

/**
 * A stand-in for APNs: HTTP/2 over TLS (the caller's certificate, e.g. the test kit's throwaway
 * CA's), `POST /3/device/{token}`. It makes token keys (P-256, a key id, a team id), verifies each
 * request's provider token (ES256 against the key its `kid` names, `iss` the key's team, `iat`
 * within the hour) with jose, requires `apns-topic`, records the push and answers 200 with an
 * `apns-id`, or what {@link script} queued for the device token (BadDeviceToken, 410 Unregistered,
 * 429 with Retry-After, …).
 */
export class ApnsSimulator {
  readonly #server: http2.Http2SecureServer;
  readonly #keys = new Map<string, { key: KeyObject; team: string }>();
  readonly #scripts = new Map<string, ApnsAnswer[]>();
  readonly arrivals: ApnsArrival[] = [];
  readonly refusals: string[] = [];
  readonly #sessions = new Set<http2.ServerHttp2Session>();
  url = '';

  private constructor(tls: { cert: string; key: string }) {
    this.#server = http2.createSecureServer(tls);
    this.#server.on('session', (s) => {
      this.#sessions.add(s);
      s.on('close', () => this.#sessions.delete(s));
    });
    this.#server.on('stream', (stream, headers) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        void this.#handle(headers, Buffer.concat(chunks).toString('utf8')).then((a) => {
          if (stream.destroyed) return;
          stream.respond({
            ':status': a.status,
            'apns-id': randomUUID(),
            ...(a.retryAfter ? { 'retry-after': a.retryAfter } : {}),
            ...(a.reason ? { 'content-type': 'application/json' } : {}),
          });
          stream.end(a.reason ? JSON.stringify({ reason: a.reason }) : undefined);
        });
      });
      stream.on('error', () => {});
    });
  }

  static async start(opts: {
    tls: { cert: string; key: string };
    port?: number;
    host?: string;
  }): Promise<ApnsSimulator> {
    const s = new ApnsSimulator(opts.tls);
    const host = opts.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      s.#server.once('error', reject);
      s.#server.listen(opts.port ?? 0, host, () => resolve());
    });
    s.url = `https://${host}:${(s.#server.address() as AddressInfo).port}`;
    return s;
  }

  /** Trusts a token key made earlier (by another run of the simulator). */
  trust(k: SimApnsKey): SimApnsKey {
    this.#keys.set(k.key_id, { key: createPublicKey(k.key_pem), team: k.team_id });
    return k;
  }

  /** A new token key whose provider tokens this simulator accepts. */
  key(team = appleId()): SimApnsKey {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const keyId = appleId();
    this.#keys.set(keyId, { key: publicKey, team });
    return {
      key_pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      key_id: keyId,
      team_id: team,
    };
  }

  /** Queues answers for pushes to `token` (after them: 200). */
  script(token: string, ...answers: ApnsAnswer[]): void {
    this.#scripts.set(token, [...(this.#scripts.get(token) ?? []), ...answers]);
  }

  /** What `token` was sent and accepted. */
  accepted(token: string): ApnsArrival[] {
    return this.arrivals.filter((a) => a.token === token && a.status === 200);
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => {
      this.#server.close(() => r());
      // Sessions the sender keeps open end with the server.
      for (const s of this.#sessions) s.destroy();
    });
  }

  async #handle(h: http2.IncomingHttpHeaders, body: string): Promise<ApnsAnswer> {
    const refuse = (status: number, reason: string, why: string): ApnsAnswer => {
      this.refusals.push(why);
      return { status, reason };
    };
    const path = String(h[':path'] ?? '');
    const token = /^\/3\/device\/([A-Za-z0-9_:.-]+)$/.exec(path)?.[1];
    if (h[':method'] !== 'POST' || !token) return refuse(404, 'BadPath', `bad path ${path}`);
    const jwt = /^bearer (.+)$/i.exec(String(h.authorization ?? ''))?.[1];
    if (!jwt) return refuse(403, 'MissingProviderToken', 'no provider token');
    let keyId: string;
    let teamId: string;
    try {
      const header = decodeProtectedHeader(jwt);
      keyId = String(header.kid);
      const known = this.#keys.get(keyId);
      if (!known || header.alg !== 'ES256')
        return refuse(403, 'InvalidProviderToken', `unknown kid ${keyId}`);
      const { payload } = await jwtVerify(jwt, known.key, {
        algorithms: ['ES256'],
        issuer: known.team,
        requiredClaims: ['iat'],
        maxTokenAge: TOKEN_MAX_AGE_S,
      });
      teamId = String(payload.iss);
    } catch (err) {
      return refuse(403, 'InvalidProviderToken', `provider token does not verify: ${String(err)}`);
    }
    const topic = h['apns-topic'] === undefined ? undefined : String(h['apns-topic']);
    if (!topic) return refuse(400, 'MissingTopic', 'no apns-topic');
    let payload: Record<string, unknown>;
    try {
      payload = JSON.parse(body) as Record<string, unknown>;
    } catch {
      return refuse(400, 'PayloadEmpty', 'payload is not JSON');
    }
    const next = this.#scripts.get(token)?.shift();
    const status = next?.status ?? 200;
    const header = (n: string) => (h[n] === undefined ? undefined : String(h[n]));
    this.arrivals.push({
      at: Date.now(),
      token,
      keyId,
      teamId,
      topic,
      pushType: header('apns-push-type'),
      collapseId: header('apns-collapse-id'),
      expiration: header('apns-expiration'),
      priority: header('apns-priority'),
      payload,
      status,
    });
    return next ?? { status: 200 };
  }
}

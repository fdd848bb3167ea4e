import {
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  randomUUID,
} from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, jwtVerify } from 'jose';

/** The OAuth2 scope an FCM assertion must ask for. */
const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
const TOKEN_PATH = '/token';

/** A service account file as Firebase's console gives it (the fields Herald reads, and type). */
export interface SimServiceAccount {
  type: 'service_account';
  project_id: string;
  client_email: string;
  private_key_id: string;
  private_key: string;
  token_uri: string;
}

/** What the send endpoint answers a device token next (then 200). */
export interface FcmAnswer {
  status: number;
  /** FCM's errorCode in the error's details: `UNREGISTERED`, `QUOTA_EXCEEDED`, … */
  errorCode?: string;
  retryAfter?: string;
}

/** One `messages:send` the simulator got, with what it answered. */
export interface FcmArrival {
  at: number;
  project: string;
  /** The service account whose access token authorised it. */
  clientEmail: string;
  token: string;
  message: Record<string, unknown>;
  status: number;
}

/** One token exchange, its assertion verified. */
export interface FcmTokenGrant {
  at: number;
  iss: string;
  aud: string;
  scope: string;
}

/**
 * A stand-in for FCM HTTP v1 and Google's OAuth2 token endpoint, as the Daraja simulator stands in
 * for M-Pesa: it makes service accounts (RSA key pairs), verifies each token request's assertion
 * (RS256 against the account's public key, `aud` its own token URI, the messaging scope, not
 * expired) with jose, answers an access token, and on `POST /v1/projects/{p}/messages:send`
 * checks the bearer token belongs to project p, records the message and answers 200, or what
 * {@link script} queued for its device token (UNREGISTERED, 429 with Retry-After, …).
 */
export class FcmSimulator {
  readonly #server: http.Server;
  readonly #keys = new Map<string, { key: KeyObject; project: string }>();
  readonly #access = new Map<string, { clientEmail: string; project: string }>();
  readonly #scripts = new Map<string, FcmAnswer[]>();
  readonly arrivals: FcmArrival[] = [];
  readonly grants: FcmTokenGrant[] = [];
  /** Refusals with why (a bad assertion, a wrong bearer), for tests to show. */
  readonly refusals: string[] = [];
  url = '';

  private constructor() {
    this.#server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void this.#handle(req, Buffer.concat(chunks).toString('utf8')).then(
          ({ status, body, headers }) => {
            res.writeHead(status, { 'content-type': 'application/json', ...headers });
            res.end(JSON.stringify(body));
          },
        );
      });
    });
  }

  static async start(opts: { port?: number; host?: string } = {}): Promise<FcmSimulator> {
    const s = new FcmSimulator();
    const host = opts.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      s.#server.once('error', reject);
      s.#server.listen(opts.port ?? 0, host, () => resolve());
    });
    s.url = `http://${host}:${(s.#server.address() as AddressInfo).port}`;
    return s;
  }

  /** FCM_TOKEN_URI for this simulator. */
  get tokenUri(): string {
    return this.url + TOKEN_PATH;
  }

  /** Trusts a service account made earlier (by another run of the simulator): its file. */
  trust(sa: SimServiceAccount): SimServiceAccount {
    this.#keys.set(sa.client_email, {
      key: createPublicKey(sa.private_key),
      project: sa.project_id,
    });
    return { ...sa, token_uri: this.tokenUri };
  }

  /** A new service account of `project` whose assertions this simulator accepts. */
  serviceAccount(project = 'herald-sim'): SimServiceAccount {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const email = `sim-${randomBytes(4).toString('hex')}@${project}.iam.gserviceaccount.com`;
    this.#keys.set(email, { key: publicKey, project });
    return {
      type: 'service_account',
      project_id: project,
      client_email: email,
      private_key_id: randomBytes(20).toString('hex'),
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      token_uri: this.tokenUri,
    };
  }

  /** Queues answers for pushes to `token` (after them: 200). */
  script(token: string, ...answers: FcmAnswer[]): void {
    this.#scripts.set(token, [...(this.#scripts.get(token) ?? []), ...answers]);
  }

  /** What `token` was sent and accepted. */
  accepted(token: string): FcmArrival[] {
    return this.arrivals.filter((a) => a.token === token && a.status === 200);
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((r) => this.#server.close(() => r()));
  }

  async #handle(
    req: http.IncomingMessage,
    body: string,
  ): Promise<{ status: number; body: unknown; headers?: Record<string, string> }> {
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (req.method === 'POST' && path === TOKEN_PATH) return this.#token(body);
    const send = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(path);
    if (req.method === 'POST' && send?.[1]) return this.#send(req, send[1], body);
    return { status: 404, body: { error: { code: 404, status: 'NOT_FOUND', message: path } } };
  }

  async #token(body: string) {
    const form = new URLSearchParams(body);
    const refuse = (why: string) => {
      this.refusals.push(why);
      return { status: 400, body: { error: 'invalid_grant', error_description: why } };
    };
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer')
      return refuse('grant_type must be urn:ietf:params:oauth:grant-type:jwt-bearer');
    const assertion = form.get('assertion') ?? '';
    let iss: string;
    try {
      iss = String(decodeJwt(assertion).iss);
    } catch {
      return refuse('assertion is not a JWT');
    }
    const known = this.#keys.get(iss);
    if (!known) return refuse(`no service account ${iss}`);
    try {
      const { payload } = await jwtVerify(assertion, known.key, {
        algorithms: ['RS256'],
        audience: this.tokenUri,
        issuer: iss,
        requiredClaims: ['iat', 'exp'],
      });
      if (payload.scope !== FCM_SCOPE) return refuse(`scope must be ${FCM_SCOPE}`);
      this.grants.push({ at: Date.now(), iss, aud: this.tokenUri, scope: String(payload.scope) });
    } catch (err) {
      return refuse(`assertion does not verify: ${String(err)}`);
    }
    const token = `ya29.sim-${randomUUID()}`;
    this.#access.set(token, { clientEmail: iss, project: known.project });
    return { status: 200, body: { access_token: token, expires_in: 3599, token_type: 'Bearer' } };
  }

  async #send(req: http.IncomingMessage, project: string, body: string) {
    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const who = auth ? this.#access.get(auth) : undefined;
    if (!who || who.project !== project) {
      this.refusals.push(
        `send to ${project}: bearer token ${who ? `of ${who.project}` : 'unknown'}`,
      );
      return {
        status: 401,
        body: { error: { code: 401, status: 'UNAUTHENTICATED', message: 'bad access token' } },
      };
    }
    let message: Record<string, unknown>;
    try {
      message = (JSON.parse(body) as { message: Record<string, unknown> }).message;
    } catch {
      return { status: 400, body: { error: { code: 400, status: 'INVALID_ARGUMENT' } } };
    }
    const token = String(message?.token ?? '');
    const next = this.#scripts.get(token)?.shift();
    const status = next?.status ?? 200;
    this.arrivals.push({
      at: Date.now(),
      project,
      clientEmail: who.clientEmail,
      token,
      message,
      status,
    });
    if (status === 200)
      return { status, body: { name: `projects/${project}/messages/${randomUUID()}` } };
    return {
      status,
      ...(next?.retryAfter ? { headers: { 'retry-after': next.retryAfter } } : {}),
      body: {
        error: {
          code: status,
          status: status === 404 ? 'NOT_FOUND' : status === 429 ? 'RESOURCE_EXHAUSTED' : 'INTERNAL',
          details: next?.errorCode
            ? [
                {
                  '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError',
                  errorCode: next.errorCode,
                },
              ]
            : [],
        },
      },
    };
  }
}

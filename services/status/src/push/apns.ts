import http2 from 'node:http2';
import { checkedUrl, OutboundError, policyLookup, type Resolver } from '@herald/outbound';
import type { PushMessage } from '@herald/proto';
import { importPKCS8, SignJWT } from 'jose';
import type { ApnsCredentials } from './native-credentials.js';
import { failed, type SendResult } from './send.js';

/** A provider token is used this long at most (Apple: refresh between 20 and 60 minutes). */
export const APNS_TOKEN_MAX_AGE_MS = 50 * 60_000;

export interface ApnsOptions {
  /** APNS_ORIGIN and APNS_SANDBOX_ORIGIN. */
  origin: string;
  sandboxOrigin: string;
  allowPrivate: boolean;
  /** PUSH_CA_FILE's CAs. */
  ca: string[] | undefined;
  timeoutMs: number;
  maxResponseBytes: number;
  resolver?: Resolver;
}

/**
 * APNs: one HTTP/2 session per origin (reopened when it closes), each push a `POST
 * /3/device/{token}` with an ES256 provider token (`kid` the key id, `iss` the team, `iat`) cached
 * per account for at most {@link APNS_TOKEN_MAX_AGE_MS}. The session's name resolves through the
 * address rule, as every push endpoint's does; PUSH_CA_FILE is trusted beside the system's CAs.
 */
export class ApnsSender {
  readonly #opts: ApnsOptions;
  readonly #sessions = new Map<string, http2.ClientHttp2Session>();
  readonly #tokens = new Map<string, { jwt: string; at: number; version: string }>();

  constructor(opts: ApnsOptions) {
    this.#opts = opts;
  }

  async send(
    account: string,
    creds: ApnsCredentials,
    token: string,
    msg: PushMessage,
    ttlS: number,
    signal?: AbortSignal,
  ): Promise<SendResult> {
    const started = Date.now();
    let jwt: string;
    try {
      jwt = await this.#providerToken(account, creds);
    } catch (err) {
      return { ...failed(err, started), failure: 'refused', error: `APNs key: ${String(err)}` };
    }
    const origin = creds.sandbox ? this.#opts.sandboxOrigin : this.#opts.origin;
    try {
      const res = await this.#post(origin, token, jwt, creds.topic, msg, ttlS, signal);
      // An expired or refused provider token: the next push signs a new one.
      if (res.status === 403) this.#tokens.delete(account);
      return { ...res, failure: null, latencyMs: Date.now() - started };
    } catch (err) {
      return failed(err, started);
    }
  }

  close(): void {
    for (const s of this.#sessions.values()) s.close();
    this.#sessions.clear();
  }

  async #providerToken(account: string, creds: ApnsCredentials): Promise<string> {
    const cached = this.#tokens.get(account);
    if (
      cached &&
      cached.version === creds.version &&
      Date.now() - cached.at < APNS_TOKEN_MAX_AGE_MS
    )
      return cached.jwt;
    const key = await importPKCS8(creds.privateKey, 'ES256');
    const at = Date.now();
    const jwt = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: creds.keyId })
      .setIssuer(creds.teamId)
      .setIssuedAt(Math.floor(at / 1000))
      .sign(key);
    this.#tokens.set(account, { jwt, at, version: creds.version });
    return jwt;
  }

  #session(origin: string): http2.ClientHttp2Session {
    const open = this.#sessions.get(origin);
    if (open && !open.closed && !open.destroyed) return open;
    const url = checkedUrl(origin, { allowPrivate: this.#opts.allowPrivate });
    if (url.protocol !== 'https:') {
      throw new OutboundError(
        'refused',
        `${origin}: APNs is HTTP/2 over TLS, give an https:// origin`,
      );
    }
    const s = http2.connect(url, {
      lookup: policyLookup(this.#opts),
      ...(this.#opts.ca ? { ca: this.#opts.ca } : {}),
    });
    s.on('error', () => {});
    s.on('close', () => {
      if (this.#sessions.get(origin) === s) this.#sessions.delete(origin);
    });
    // An idle session does not keep the process alive.
    s.unref();
    this.#sessions.set(origin, s);
    return s;
  }

  #post(
    origin: string,
    token: string,
    jwt: string,
    topic: string,
    msg: PushMessage,
    ttlS: number,
    signal: AbortSignal | undefined,
  ): Promise<{ status: number; retryAfter: string | undefined; error: string | null }> {
    const session = this.#session(origin);
    const body = Buffer.from(JSON.stringify(apnsPayload(msg)));
    return new Promise((resolve, reject) => {
      const req = session.request(
        {
          ':method': 'POST',
          ':path': `/3/device/${token}`,
          authorization: `bearer ${jwt}`,
          'apns-topic': topic,
          'apns-push-type': 'alert',
          'apns-priority': '10',
          'apns-expiration': String(Math.floor(Date.now() / 1000) + ttlS),
          'apns-collapse-id': msg.tag,
          'content-type': 'application/json',
          'content-length': String(body.length),
        },
        signal ? { signal } : {},
      );
      const timer = setTimeout(() => {
        req.close(http2.constants.NGHTTP2_CANCEL);
        reject(new OutboundError('timeout', `no answer within ${this.#opts.timeoutMs} ms`));
      }, this.#opts.timeoutMs);
      let status = 0;
      let retryAfter: string | undefined;
      const chunks: Buffer[] = [];
      let seen = 0;
      req.on('response', (h) => {
        status = Number(h[':status'] ?? 0);
        const ra = h['retry-after'];
        retryAfter = Array.isArray(ra) ? ra[0] : ra;
      });
      req.on('data', (c: Buffer) => {
        if (seen < this.#opts.maxResponseBytes) chunks.push(c);
        seen += c.length;
      });
      req.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status, retryAfter, error: status === 200 ? null : apnsReason(text) });
      });
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(err instanceof OutboundError ? err : new OutboundError('network', err.message, err));
      });
      req.end(body);
    });
  }
}

/**
 * What APNs delivers: the alert, the thread (collapse key), and under `herald` what the app needs
 * to fetch or dedupe (the event ids, the count, url/icon; the payload only when the message
 * carries it).
 */
export function apnsPayload(msg: PushMessage): Record<string, unknown> {
  return {
    aps: {
      alert: { title: msg.title, ...(msg.body !== undefined ? { body: msg.body } : {}) },
      'thread-id': msg.tag,
    },
    herald: {
      id: msg.id,
      ids: msg.ids,
      count: msg.count,
      ...(msg.url !== undefined ? { url: msg.url } : {}),
      ...(msg.icon !== undefined ? { icon: msg.icon } : {}),
      ...(msg.payload !== undefined ? { payload: msg.payload } : {}),
    },
  };
}

/** APNs' `reason` (`BadDeviceToken`, `Unregistered`, `TooManyRequests`, …) from an error body. */
export function apnsReason(body: string): string {
  try {
    const r = (JSON.parse(body) as { reason?: unknown }).reason;
    if (typeof r === 'string') return r;
  } catch {}
  return body.slice(0, 200) || 'no body';
}

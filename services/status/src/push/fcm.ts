import type { OutboundClient } from '@herald/outbound';
import type { PushMessage } from '@herald/proto';
import { importPKCS8, SignJWT } from 'jose';
import type { FcmCredentials } from './native-credentials.js';
import { failed, type SendResult } from './send.js';

/** The OAuth2 scope FCM HTTP v1 takes. */
export const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
/** An access token is renewed this long before it expires, ms. */
const RENEW_BEFORE_MS = 5 * 60_000;
/** The assertion's lifetime: Google takes at most one hour. */
const ASSERTION_S = 3600;

interface CachedToken {
  token: string;
  until: number;
  version: string;
}

export interface FcmOptions {
  /** FCM_ORIGIN. */
  origin: string;
  /** FCM_TOKEN_URI: the JWT's `aud` and where it is exchanged. */
  tokenUri: string;
}

/**
 * FCM HTTP v1: an account's service account signs a JWT (RS256, `iss` its e-mail, `aud` the token
 * URI, the messaging scope) exchanged for an OAuth2 access token, cached per account until five
 * minutes before it expires (a re-configured account gets a new one); each push is one
 * `messages:send` with it. Both requests go through the outbound client (address rule, CA file).
 */
export class FcmSender {
  readonly #client: OutboundClient;
  readonly #opts: FcmOptions;
  readonly #tokens = new Map<string, CachedToken>();
  /** One exchange per account at a time: concurrent pushes wait for it. */
  readonly #pending = new Map<string, Promise<CachedToken | SendResult>>();

  constructor(client: OutboundClient, opts: FcmOptions) {
    this.#client = client;
    this.#opts = opts;
  }

  async send(
    account: string,
    creds: FcmCredentials,
    token: string,
    msg: PushMessage,
    ttlS: number,
    signal?: AbortSignal,
  ): Promise<SendResult> {
    const started = Date.now();
    const access = await this.#accessToken(account, creds, signal);
    if ('status' in access) return access;
    const url = `${this.#opts.origin}/v1/projects/${encodeURIComponent(creds.projectId)}/messages:send`;
    try {
      const res = await this.#client.exchange(
        url,
        { authorization: `Bearer ${access.token}`, 'content-type': 'application/json' },
        JSON.stringify({ message: fcmMessage(token, msg, ttlS) }),
        signal,
      );
      // A token the server no longer takes: the next push exchanges a new one.
      if (res.status === 401) this.#tokens.delete(account);
      return {
        status: res.status,
        retryAfter: res.retryAfter,
        error: res.status >= 300 ? fcmError(res.body) : null,
        failure: null,
        latencyMs: Date.now() - started,
      };
    } catch (err) {
      return failed(err, started);
    }
  }

  async #accessToken(
    account: string,
    creds: FcmCredentials,
    signal: AbortSignal | undefined,
  ): Promise<CachedToken | SendResult> {
    const cached = this.#tokens.get(account);
    if (cached && cached.version === creds.version && cached.until > Date.now()) return cached;
    const inflight = this.#pending.get(account);
    if (inflight) return inflight;
    const p = this.#exchange(creds, signal).finally(() => this.#pending.delete(account));
    this.#pending.set(account, p);
    const got = await p;
    if (!('status' in got)) this.#tokens.set(account, got);
    return got;
  }

  async #exchange(creds: FcmCredentials, signal?: AbortSignal): Promise<CachedToken | SendResult> {
    const started = Date.now();
    let assertion: string;
    try {
      const key = await importPKCS8(creds.privateKey, 'RS256');
      assertion = await new SignJWT({ scope: FCM_SCOPE })
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
        .setIssuer(creds.clientEmail)
        .setAudience(this.#opts.tokenUri)
        .setIssuedAt()
        .setExpirationTime(`${ASSERTION_S}s`)
        .sign(key);
    } catch (err) {
      return {
        ...failed(err, started),
        failure: 'refused',
        error: `service account key: ${String(err)}`,
      };
    }
    try {
      const res = await this.#client.exchange(
        this.#opts.tokenUri,
        { 'content-type': 'application/x-www-form-urlencoded' },
        new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
          assertion,
        }).toString(),
        signal,
      );
      const body = parseJson(res.body) as
        | { access_token?: unknown; expires_in?: unknown }
        | undefined;
      if (res.status !== 200 || typeof body?.access_token !== 'string') {
        // Refused (400 invalid_grant, 401): the service account is wrong; 429/5xx: retried.
        const status = res.status === 200 || res.status === 400 ? 401 : res.status;
        return {
          status,
          retryAfter: res.retryAfter,
          error: `the token endpoint answered ${res.status}: ${res.body.slice(0, 200)}`,
          failure: null,
          latencyMs: Date.now() - started,
        };
      }
      const expiresS = typeof body.expires_in === 'number' ? body.expires_in : ASSERTION_S;
      return {
        token: body.access_token,
        until: Date.now() + Math.max(0, expiresS * 1000 - RENEW_BEFORE_MS),
        version: creds.version,
      };
    } catch (err) {
      return failed(err, started);
    }
  }
}

/**
 * FCM's message: the notification the device shows, `data` (strings only) with what the app
 * needs to fetch or dedupe (the event ids, the count, the collapse key, url/icon; the payload only
 * when the message carries it), and both platforms' collapse key and TTL.
 */
export function fcmMessage(token: string, msg: PushMessage, ttlS: number): Record<string, unknown> {
  const data: Record<string, string> = {
    herald: '1',
    id: msg.id,
    ids: msg.ids.join(','),
    count: String(msg.count),
    tag: msg.tag,
  };
  if (msg.url !== undefined) data.url = msg.url;
  if (msg.icon !== undefined) data.icon = msg.icon;
  if (msg.payload !== undefined) data.payload = JSON.stringify(msg.payload);
  return {
    token,
    notification: { title: msg.title, ...(msg.body !== undefined ? { body: msg.body } : {}) },
    data,
    android: { collapse_key: msg.tag, ttl: `${ttlS}s`, notification: { tag: msg.tag } },
    apns: {
      headers: {
        'apns-collapse-id': msg.tag,
        'apns-expiration': String(Math.floor(Date.now() / 1000) + ttlS),
      },
    },
  };
}

/** FCM's error code (`UNREGISTERED`, `QUOTA_EXCEEDED`, …) or status from an error body. */
export function fcmError(body: string): string {
  const e = (
    parseJson(body) as { error?: { status?: string; details?: Array<{ errorCode?: string }> } }
  )?.error;
  const code = e?.details?.find((d) => typeof d.errorCode === 'string')?.errorCode;
  return code ?? e?.status ?? (body.slice(0, 200) || 'no body');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

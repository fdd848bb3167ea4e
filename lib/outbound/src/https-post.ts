import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import tls from 'node:tls';
import {
  ForbiddenAddressError,
  isPublicAddress,
  type Resolver,
  resolveAllowed,
  UnresolvedHostError,
} from './address-policy.js';
import { parseTargetUrl } from './target-url.js';

/** Why a request got no HTTP answer. */
export type OutboundFailure = 'timeout' | 'network' | 'refused';

/** A request that got no HTTP status: the address rule refused it, it timed out, or the network failed. */
export class OutboundError extends Error {
  readonly kind: OutboundFailure;
  constructor(kind: OutboundFailure, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'OutboundError';
    this.kind = kind;
  }
}

export interface OutboundClientOptions {
  /** Lift the address rule, allow http:// (development only). */
  allowPrivate: boolean;
  /** Whole request, connect to status line, ms. */
  timeoutMs: number;
  /** Response body bytes read (and discarded) before the connection is closed. */
  maxResponseBytes: number;
  /** Trusted CAs, PEM; undefined: Node's default (the system's and NODE_EXTRA_CA_CERTS). */
  ca?: string[] | undefined;
  resolver?: Resolver;
}

export interface PostResult {
  status: number;
  /** The Retry-After header as sent, if any. */
  retryAfter: string | undefined;
}

/** A POST's answer with its body (at most maxResponseBytes of it, as UTF-8 text). */
export interface ExchangeResult extends PostResult {
  body: string;
}

/**
 * A `lookup` for net/tls/http2 connections that resolves through the address rule: every address
 * of the name must be allowed, and the connection goes to one of those checked.
 */
export function policyLookup(opts: { allowPrivate: boolean; resolver?: Resolver }): LookupFunction {
  return (host, options, callback) => {
    resolveAllowed(host, opts).then(
      (found) => {
        if (options.all) {
          callback(
            null,
            found.map((a): LookupAddress => ({ address: a.address, family: a.family })),
          );
        } else {
          const first = found.find((a) => !options.family || a.family === options.family);
          if (first) callback(null, first.address, first.family);
          else
            callback(new UnresolvedHostError(host, new Error('no address of that family')), '', 4);
        }
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, '', 4),
    );
  };
}

/** Refuses a URL the address rule forbids before connecting (a private IP literal, http:// unless allowed). */
export function checkedUrl(rawUrl: string, opts: { allowPrivate: boolean }): URL {
  let url: URL;
  try {
    url = parseTargetUrl(rawUrl, opts);
  } catch (err) {
    throw toOutboundError(err);
  }
  const bare = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(bare) !== 0 && !opts.allowPrivate && !isPublicAddress(bare)) {
    throw toOutboundError(new ForbiddenAddressError(bare, bare));
  }
  return url;
}

/**
 * POSTs to customer URLs. The connection's address is the one the policy checked: the request's
 * `lookup` resolves the name and refuses it unless every address is allowed, and an IP literal is
 * judged before connecting, so a name cannot be checked against one address and connected to
 * another. No redirect is followed (a 3xx is just a status). Connections are kept alive: a reused
 * one goes to the address checked when it opened.
 */
export class OutboundClient {
  readonly #opts: OutboundClientOptions;
  readonly #https: https.Agent;
  readonly #http: http.Agent;
  readonly #lookup: LookupFunction;

  constructor(opts: OutboundClientOptions) {
    this.#opts = opts;
    // One secure context for every connection: an agent given `ca` itself would name each request's
    // connection pool by the whole PEM list (every system CA) and build a context per connection.
    const secureContext = opts.ca ? tls.createSecureContext({ ca: opts.ca }) : undefined;
    this.#https = new https.Agent({ keepAlive: true, ...(secureContext ? { secureContext } : {}) });
    this.#http = new http.Agent({ keepAlive: true });
    this.#lookup = policyLookup(opts);
  }

  /** One POST (a text body as UTF-8, a Buffer as is); resolves with the status once the head arrives (the body is drained, capped). */
  async post(
    rawUrl: string,
    headers: Record<string, string>,
    body: string | Buffer,
    signal?: AbortSignal,
  ): Promise<PostResult> {
    const { status, retryAfter } = await this.#request(rawUrl, headers, body, signal, false);
    return { status, retryAfter };
  }

  /** One POST whose answer's body matters (an API's JSON): resolves once it is read, capped. */
  exchange(
    rawUrl: string,
    headers: Record<string, string>,
    body: string | Buffer,
    signal?: AbortSignal,
  ): Promise<ExchangeResult> {
    return this.#request(rawUrl, headers, body, signal, true);
  }

  async #request(
    rawUrl: string,
    headers: Record<string, string>,
    body: string | Buffer,
    signal: AbortSignal | undefined,
    read: boolean,
  ): Promise<ExchangeResult> {
    // An IP literal is never looked up: it is judged here.
    const url = checkedUrl(rawUrl, this.#opts);
    const secure = url.protocol === 'https:';
    const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    return new Promise<ExchangeResult>((resolve, reject) => {
      const req = (secure ? https : http).request(url, {
        method: 'POST',
        agent: secure ? this.#https : this.#http,
        lookup: this.#lookup,
        headers: { ...headers, 'content-length': String(payload.length) },
        signal,
      });
      const timer = setTimeout(
        () =>
          req.destroy(new OutboundError('timeout', `no answer within ${this.#opts.timeoutMs} ms`)),
        this.#opts.timeoutMs,
      );
      req.on('response', (res) => {
        const retryAfter = res.headers['retry-after'];
        const status = res.statusCode ?? 0;
        if (!read) {
          clearTimeout(timer);
          resolve({ status, retryAfter, body: '' });
          drain(res, this.#opts.maxResponseBytes, this.#opts.timeoutMs);
          return;
        }
        const chunks: Buffer[] = [];
        let seen = 0;
        const done = () => {
          clearTimeout(timer);
          resolve({ status, retryAfter, body: Buffer.concat(chunks).toString('utf8') });
        };
        res.on('data', (chunk: Buffer) => {
          const room = this.#opts.maxResponseBytes - seen;
          if (room > 0) chunks.push(chunk.subarray(0, room));
          seen += chunk.length;
          if (seen > this.#opts.maxResponseBytes) {
            res.destroy();
            done();
          }
        });
        res.on('end', done);
        res.on('error', done);
      });
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(toOutboundError(err));
      });
      req.end(payload);
    });
  }

  close(): void {
    this.#https.destroy();
    this.#http.destroy();
  }
}

/**
 * Reads and discards up to `max` bytes within `ms`, else closes the connection: a receiver cannot
 * make Herald hold a body, nor a socket, for longer.
 */
function drain(res: http.IncomingMessage, max: number, ms: number): void {
  let seen = 0;
  const timer = setTimeout(() => res.destroy(), ms);
  res.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > max) res.destroy();
  });
  res.on('close', () => clearTimeout(timer));
  res.on('error', () => {});
}

function toOutboundError(err: unknown): OutboundError {
  if (err instanceof OutboundError) return err;
  if (err instanceof ForbiddenAddressError) return new OutboundError('refused', err.message, err);
  if (err instanceof Error && err.name === 'TargetUrlError')
    return new OutboundError('refused', err.message, err);
  if (err instanceof Error && err.name === 'AbortError')
    return new OutboundError('network', 'aborted (Herald is shutting down)', err);
  const code = (err as { code?: string }).code;
  const message = err instanceof Error ? err.message : String(err);
  return new OutboundError('network', code ? `${code}: ${message}` : message, err);
}

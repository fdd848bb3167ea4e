import type http from 'node:http';
import { type Logger, safePath, sourceAddress } from '@herald/kit';
import { HeraldError, NOTIFY_PATHS } from '@herald/proto';
import type { Middleware } from 'koa';
import { type Answer, resultOfError } from './answer.js';
import type { Dispatch } from './dispatch.js';
import { checkJsonRequest, readJsonBody } from './http-body.js';
import type { DispatchResult } from './results.js';

export interface NotifyRouteOptions {
  /** Most bytes a body may have: PAYLOAD_LIMIT_BYTES + BODY_OVERHEAD_BYTES. */
  bodyLimitBytes: number;
  /** Proxies in front that append to X-Forwarded-For (TRUSTED_PROXY_HOPS); 0 by default. */
  trustedProxyHops?: number;
  logger: Logger;
  /** Counts each dispatch's outcome once. */
  answer: Answer;
}

export interface NotifyRoute {
  /**
   * Serves `POST /notify` and its alias straight from node's request listener, before koa, and
   * says whether it did. Anything else (another method, a trailing slash, other paths) is koa's.
   */
  serve(req: http.IncomingMessage, res: http.ServerResponse): boolean;
  /** The same route for koa's router, which reaches it for the paths `serve` leaves to koa. */
  middleware: Middleware;
}

const PATHS: ReadonlySet<string> = new Set(NOTIFY_PATHS);
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * `POST /notify` on node's request and response, without koa: the dispatch route reads three
 * headers and the body and writes one JSON answer, so koa's context, its middleware chain and its
 * router match are work the route does not need (issue 11 §4, docs/benchmarks-history.md). The answer
 * carries the headers koa wrote: status, `Content-Type: application/json; charset=utf-8`, Content-Length,
 * `Retry-After` when there is one, the CORS headers of `cors.ts` for a request with an Origin,
 * and `Connection: close` after an oversized body or a refused source. The route is its own error
 * boundary: a thrown error goes through the same `resultOfError` as koa's boundary, and the
 * answer is counted once, as there. Reached through koa (see `middleware`), it is the same code.
 */
export function notifyRoute(dispatch: Dispatch, opts: NotifyRouteOptions): NotifyRoute {
  async function handle(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    cors: boolean,
  ): Promise<void> {
    const started = performance.now();
    const { headers } = req;
    const origin = headers.origin || undefined;
    let tooLarge = false;
    let result: DispatchResult;
    try {
      checkJsonRequest(
        headers['content-type'] || undefined,
        headers['content-encoding'] || undefined,
      );
      const body = await readJsonBody(req, opts.bodyLimitBytes).catch((err: unknown) => {
        if (err instanceof HeraldError && err.code === 'payload_too_large') tooLarge = true;
        throw err;
      });
      result = await dispatch({
        body,
        origin,
        idempotencyKey: header(req, 'idempotency-key'),
        source: sourceAddress(req, opts.trustedProxyHops ?? 0),
      });
    } catch (err) {
      result = resultOfError(err, opts.logger, { method: req.method, path: safePath(req.url) });
    }
    opts.answer('http', result, started);
    write(res, result, cors ? origin : undefined, tooLarge);
  }

  return {
    serve(req, res) {
      if (req.method !== 'POST' || !PATHS.has(safePath(req.url))) return false;
      handle(req, res, true).catch((err: unknown) => {
        // Only a bug in answering gets here (the dispatch's own errors are answers).
        opts.logger.error({ err }, 'could not answer a dispatch');
        res.destroy();
      });
      return true;
    },
    middleware: async (ctx) => {
      // koa's cors middleware has already set the CORS headers on the response.
      ctx.respond = false;
      await handle(ctx.req, ctx.res, false);
    },
  };
}

function write(
  res: http.ServerResponse,
  result: DispatchResult,
  origin: string | undefined,
  tooLarge: boolean,
): void {
  // The client went away: nobody reads the answer (koa skips it the same way).
  if (res.writableEnded || res.socket?.writable === false) return;
  const body = JSON.stringify(result.body);
  // The order koa writes them in: CORS first (its cors middleware), then the body's type.
  if (origin) {
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Vary', 'Origin');
    res.setHeader('Access-Control-Expose-Headers', 'Retry-After');
  }
  // The rest of an oversized body is not worth reading just to keep the connection alive.
  if (tooLarge) res.setHeader('Connection', 'close');
  res.setHeader('Content-Type', JSON_TYPE);
  if (result.retryAfter !== undefined) res.setHeader('Retry-After', String(result.retryAfter));
  // A source refused for its bad keys is told once per connection, then must reconnect.
  if ('error' in result.body && result.body.error.code === 'auth_failures')
    res.setHeader('Connection', 'close');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.statusCode = result.status;
  res.end(body);
}

/** A header's value, distinguishing absent (undefined) from sent empty (''). */
function header(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

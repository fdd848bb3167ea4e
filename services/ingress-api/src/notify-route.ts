import type http from 'node:http';
import { type Logger, safePath, sourceAddress } from '@herald/kit';
import { HeraldError, NOTIFY_PATHS } from '@herald/proto';
import type { Middleware } from 'koa';
import { type Answer, outcomeOfError } from './answer.js';
import { allowOrigin, exposeRetryAfter } from './cors.js';
import type { Dispatch } from './dispatch.js';
import { checkJsonRequest, readJsonBody } from './http-body.js';
import { type HttpAnswer, type Outcome, toHttp } from './outcome.js';
import type { RefusalLog } from './refusals/refusal-log.js';

export interface NotifyRouteOptions {
  /** Most bytes a body may have: PAYLOAD_LIMIT_BYTES + BODY_OVERHEAD_BYTES. */
  bodyLimitBytes: number;
  /** Proxies in front that append to X-Forwarded-For (TRUSTED_PROXY_HOPS); 0 by default. */
  trustedProxyHops?: number;
  logger: Logger;
  /** Counts each dispatch's outcome once. */
  answer: Answer;
  /** Where a refusal attributed to a key is noted for the dashboard (issue 45); none when absent. */
  refusals?: Pick<RefusalLog, 'noteError'> | undefined;
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
 * boundary: a thrown error goes through the same `outcomeOfError` as koa's boundary, and the
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
    let outcome: Outcome;
    try {
      checkJsonRequest(
        headers['content-type'] || undefined,
        headers['content-encoding'] || undefined,
      );
      const body = await readJsonBody(req, opts.bodyLimitBytes).catch((err: unknown) => {
        if (err instanceof HeraldError && err.code === 'payload_too_large') tooLarge = true;
        throw err;
      });
      outcome = await dispatch({
        body,
        origin,
        idempotencyKey: header(req, 'idempotency-key'),
        source: sourceAddress(req, opts.trustedProxyHops ?? 0),
      });
    } catch (err) {
      const path = safePath(req.url);
      opts.refusals?.noteError(err, { route: path, origin });
      outcome = outcomeOfError(err, opts.logger, { method: req.method, path });
    }
    opts.answer('http', outcome, started);
    write(res, toHttp(outcome), cors ? origin : undefined, tooLarge);
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
  answer: HttpAnswer,
  origin: string | undefined,
  tooLarge: boolean,
): void {
  // The client went away: nobody reads the answer (koa skips it the same way).
  if (res.writableEnded || res.socket?.writable === false) return;
  const body = JSON.stringify(answer.body);
  // The order koa writes them in: CORS first (cors.ts, koa's middleware), then the body's type.
  if (origin) {
    allowOrigin(res, origin);
    exposeRetryAfter(res);
  }
  // The rest of an oversized body is not worth reading just to keep the connection alive.
  if (tooLarge) res.setHeader('Connection', 'close');
  res.setHeader('Content-Type', JSON_TYPE);
  setAnswerHeaders(res, answer);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.statusCode = answer.status;
  res.end(body);
}

/**
 * The headers a dispatch answer carries beside its body, over koa (http-app.ts) or not: when to
 * retry, and `Connection: close` for a source refused for its bad keys, which is told once per
 * connection and must then reconnect.
 */
export function setAnswerHeaders(
  res: Pick<http.ServerResponse, 'setHeader'>,
  answer: HttpAnswer,
): void {
  if (answer.retryAfter !== undefined) res.setHeader('Retry-After', String(answer.retryAfter));
  if ('error' in answer.body && answer.body.error.code === 'auth_failures')
    res.setHeader('Connection', 'close');
}

/** A header's value, distinguishing absent (undefined) from sent empty (''). */
function header(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

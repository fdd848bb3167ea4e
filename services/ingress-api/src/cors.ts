import type http from 'node:http';
import type { Middleware } from 'koa';

/** Headers a browser may send on a dispatch. */
const ALLOWED_HEADERS = 'Content-Type, Idempotency-Key';
/** How long a browser may cache the preflight answer, seconds. */
const PREFLIGHT_MAX_AGE = 600;

/**
 * Lets browsers call the dispatch endpoints (and the push and topic routes) with a web key. Any Origin is
 * reflected because CORS is not the gate here: a web key's registered domain is (authorizeKeyUse
 * refuses any other Origin with 403), and no cookies or credentials are involved. `methodsOf`
 * says which methods a path takes (`POST` for the dispatch paths), undefined for a path closed
 * to CORS.
 */
export function cors(methodsOf: (path: string) => string | undefined): Middleware {
  return async (ctx, next) => {
    const origin = ctx.get('Origin');
    const methods = origin ? methodsOf(ctx.path) : undefined;
    if (!origin || methods === undefined) return next();
    allowOrigin(ctx.res, origin);
    if (ctx.method === 'OPTIONS' && ctx.get('Access-Control-Request-Method')) {
      ctx.set('Access-Control-Allow-Methods', methods);
      ctx.set('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      ctx.set('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE));
      ctx.status = 204;
      return;
    }
    exposeRetryAfter(ctx.res);
    await next();
  };
}

/**
 * The CORS headers of an answer to a request with an Origin: this middleware's, and the plain
 * `POST /notify` route's (notify-route.ts), which answers without koa.
 */
export function allowOrigin(res: Pick<http.ServerResponse, 'setHeader'>, origin: string): void {
  res.setHeader('Access-Control-Allow-Origin', origin);
  res.setHeader('Vary', 'Origin');
}

/** Lets a page read an answer's Retry-After (a preflight's answer needs none). */
export function exposeRetryAfter(res: Pick<http.ServerResponse, 'setHeader'>): void {
  res.setHeader('Access-Control-Expose-Headers', 'Retry-After');
}

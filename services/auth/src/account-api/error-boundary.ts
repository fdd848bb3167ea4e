import { type Logger, safePath, toHeraldError } from '@herald/kit';
import { HeraldError } from '@herald/proto';
import type { Middleware } from 'koa';

/**
 * The account API's one error boundary, through kit's one mapping (shared with ingress): a
 * HeraldError keeps its code, status, field and safe message (plus Retry-After when it has one);
 * a stray ZodError is a 400 naming its field; anything else is a 500 whose details go to the log
 * under a request id, never to the caller.
 */
export function errorBoundary(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const error = toHeraldError(err, {
        onInternal: (requestId) =>
          logger.error(
            { err, requestId, method: ctx.method, path: safePath(ctx.url) },
            'account API internal error',
          ),
        internalMessage: (requestId) =>
          `Something failed inside Herald: retry shortly, and quote request id ${requestId} if it persists`,
      });
      ctx.status = error.status;
      ctx.body = error.toBody();
      if (error.retryAfter !== undefined) ctx.set('Retry-After', String(error.retryAfter));
    }
    ctx.set('Cache-Control', 'no-store');
  };
}

/** Turns the router's bodiless 404/405/501 into the JSON error shape. */
export function unmatchedAsJson(): Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.body !== undefined && ctx.body !== null) return;
    if (ctx.status === 204) return;
    const path = safePath(ctx.url);
    if (ctx.status === 405 || ctx.status === 501) {
      const allow = ctx.response.get('Allow');
      throw new HeraldError(
        'method_not_allowed',
        `${ctx.method} is not allowed on ${path}${allow ? `: use ${allow}` : ''}`,
        { field: 'method' },
      );
    }
    if (ctx.status === 404) {
      throw new HeraldError(
        'not_found',
        `No route ${ctx.method} ${path}: the account API lives under /v1 (see docs/api.md)`,
      );
    }
  };
}

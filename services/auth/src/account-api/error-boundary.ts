import { randomUUID } from 'node:crypto';
import { type Logger, safePath } from '@herald/kit';
import { HeraldError } from '@herald/proto';
import type { Middleware } from 'koa';
import { ZodError } from 'zod';

/**
 * The account API's one error boundary: a HeraldError keeps its code, status, field and safe
 * message (plus Retry-After when it has one); a stray ZodError is a 400 naming its field;
 * anything else is a 500 whose details go to the log under a request id, never to the caller.
 */
export function errorBoundary(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      let error: HeraldError;
      if (err instanceof HeraldError) {
        error = err;
      } else if (err instanceof ZodError) {
        const issue = err.issues[0];
        const field = issue?.path.map(String).join('.') || 'body';
        error = new HeraldError('invalid_field', issue?.message ?? `${field} is invalid`, {
          field,
        });
      } else {
        const requestId = randomUUID();
        logger.error(
          { err, requestId, method: ctx.method, path: safePath(ctx.url) },
          'account API internal error',
        );
        error = new HeraldError(
          'internal',
          `Something failed inside Herald: retry shortly, and quote request id ${requestId} if it persists`,
        );
      }
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

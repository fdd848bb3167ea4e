import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { type Logger, safePath } from '@herald/kit';
import { HeraldError, NOTIFY_PATHS } from '@herald/proto';
import Router from '@koa/router';
import Koa, { type Context, type Middleware } from 'koa';
import { cors } from './cors.js';
import type { Dispatcher } from './dispatch.js';
import { checkJsonRequest, readJsonBody } from './http-body.js';
import { type DispatchResult, fromError, internal } from './results.js';

export interface HttpAppOptions {
  /** Most bytes a body may have: PAYLOAD_LIMIT_BYTES + BODY_OVERHEAD_BYTES. */
  bodyLimitBytes: number;
  logger: Logger;
  /** kit's createOpsHandler: /healthz, /readyz, /metrics on the same listener. */
  ops?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean;
}

/**
 * The HTTP transport: reads the raw body and hands it to the dispatcher. Built without listening
 * (`app.callback()` serves it), so tests and `start()` share it.
 */
export function createHttpApp(dispatcher: Dispatcher, opts: HttpAppOptions): Koa {
  const app = new Koa();
  // Every error becomes a JSON body here, so koa's default stderr logging would only duplicate it.
  app.silent = true;
  const router = new Router();
  const notify: Middleware = async (ctx) => {
    checkJsonRequest(
      ctx.get('Content-Type') || undefined,
      ctx.get('Content-Encoding') || undefined,
    );
    const body = await readJsonBody(ctx.req, opts.bodyLimitBytes).catch((err: unknown) => {
      // The rest of an oversized body is not worth reading just to keep the connection alive.
      if (err instanceof HeraldError && err.code === 'payload_too_large')
        ctx.set('Connection', 'close');
      throw err;
    });
    const result = await dispatcher.dispatch({
      body,
      origin: ctx.get('Origin') || undefined,
      idempotencyKey: header(ctx, 'idempotency-key'),
      transport: 'http',
    });
    ctx.status = result.status;
    ctx.body = result.body;
    if (result.retryAfter !== undefined) ctx.set('Retry-After', String(result.retryAfter));
  };
  for (const path of NOTIFY_PATHS) router.post(path, notify);

  app.use(errorBoundary(dispatcher, opts.logger));
  if (opts.ops) app.use(opsRoutes(opts.ops));
  app.use(cors(NOTIFY_PATHS));
  app.use(unmatchedAsJson());
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

/**
 * The one error boundary: a HeraldError keeps its code, status and safe message; anything else
 * is a 500 whose details go to the log under a request id, never to the caller.
 */
function errorBoundary(dispatcher: Dispatcher, logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      let result: DispatchResult;
      if (err instanceof HeraldError) {
        // Only refusals of the notify routes count as dispatches; a 404 or 405 is not one.
        const isDispatch =
          (NOTIFY_PATHS as readonly string[]).includes(ctx.path) && ctx.method === 'POST';
        result = isDispatch ? dispatcher.refuse('http', err) : fromError(err);
      } else {
        const requestId = randomUUID();
        logger.error(
          { err, requestId, method: ctx.method, path: safePath(ctx.url) },
          'internal error',
        );
        result = internal(requestId);
      }
      ctx.status = result.status;
      ctx.body = result.body;
      if (result.retryAfter !== undefined) ctx.set('Retry-After', String(result.retryAfter));
    }
  };
}

function opsRoutes(ops: NonNullable<HttpAppOptions['ops']>): Middleware {
  return async (ctx, next) => {
    if (ops(ctx.req, ctx.res)) {
      // The ops handler writes the response itself (possibly later, for /readyz and /metrics).
      ctx.respond = false;
      return;
    }
    await next();
  };
}

/** Turns the router's bodiless 404/405/501 into the JSON error shape every caller gets. */
function unmatchedAsJson(): Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.body !== undefined && ctx.body !== null) return;
    const path = safePath(ctx.url);
    if (ctx.status === 405 || ctx.status === 501) {
      const allow = ctx.response.get('Allow') || 'POST';
      ctx.set('Allow', allow);
      throw new HeraldError(
        'method_not_allowed',
        `${ctx.method} is not allowed on ${path}: use ${allow}`,
        {
          field: 'method',
        },
      );
    }
    if (ctx.status === 404) {
      throw new HeraldError(
        'not_found',
        `No route ${ctx.method} ${path}: dispatch events with POST ${NOTIFY_PATHS[0]}`,
      );
    }
  };
}

/** A header's value, distinguishing absent (undefined) from sent empty (''). */
function header(ctx: Context, name: string): string | undefined {
  const value = ctx.req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

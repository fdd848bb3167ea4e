import type http from 'node:http';
import { type Logger, safePath } from '@herald/kit';
import {
  HeraldError,
  INBOX_HISTORY_PATH,
  INBOX_READ_PATH,
  NOTIFY_BATCH_PATHS,
  NOTIFY_PATHS,
  STATUS_PATH,
} from '@herald/proto';
import Router from '@koa/router';
import Koa, { type Context, type Middleware } from 'koa';
import { type Answer, outcomeOfError } from './answer.js';
import { cors } from './cors.js';
import type { Dispatch } from './dispatch.js';
import { notifyRoute, setAnswerHeaders } from './notify-route.js';
import { type Outcome, toHttp } from './outcome.js';
import { mountPushRoutes, type PushRouteOptions, pushCorsMethods } from './push-routes.js';
import { mountPusherRoutes, type PusherRouteDeps, pusherListener } from './pusher/pusher-route.js';
import type { RefusalLog } from './refusals/refusal-log.js';
import {
  mountTopicRoutes,
  type TopicRouteOptions,
  topicCorsMethods,
} from './topics/topic-routes.js';

export interface HttpAppOptions {
  /** Most bytes a body may have: PAYLOAD_LIMIT_BYTES + BODY_OVERHEAD_BYTES. */
  bodyLimitBytes: number;
  /** Proxies in front that append to X-Forwarded-For (TRUSTED_PROXY_HOPS); 0 by default. */
  trustedProxyHops?: number;
  logger: Logger;
  /** Counts each dispatch's outcome once (the dispatch's last step). */
  answer: Answer;
  /** Where a refusal attributed to a key is noted for the dashboard (issue 45); none when absent. */
  refusals?: Pick<RefusalLog, 'noteError'> | undefined;
  /** kit's createOpsHandler (public): /healthz and /readyz's status on the same listener. */
  ops?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean;
  /** `POST /events/status` (status-route.ts); absent, the path is a 404. */
  eventStatus?: Middleware;
  /** `POST /notify/batch` (batch-route.ts); absent, the paths are a 404. */
  notifyBatch?: Middleware;
  /** `POST /inbox/history` and `POST /inbox/read` (inbox-routes.ts); absent, 404s. */
  inbox?: { history: Middleware; read: Middleware };
  /** `/push/vapid-public-key` and `/push/subscriptions` (push-routes.ts); absent, 404s. */
  push?: PushRouteOptions;
  /** Pusher's signed HTTP API, `POST /apps/{app_id}/…` (pusher/pusher-route.ts); absent, 404s. */
  pusher?: PusherRouteDeps;
  /** `/topics/{topic}/members` and `/topics/{topic}` (topics/topic-routes.ts); absent, 404s. */
  topics?: TopicRouteOptions;
}

/** Paths whose answers are dispatches: counted by the error boundary, open to CORS. */
const DISPATCH_PATHS: readonly string[] = [...NOTIFY_PATHS, ...NOTIFY_BATCH_PATHS];
/** Paths open to CORS: a web dispatch key reads its inbox from the browser it sends from. */
const CORS_PATHS: ReadonlySet<string> = new Set([
  ...DISPATCH_PATHS,
  INBOX_HISTORY_PATH,
  INBOX_READ_PATH,
]);

export interface HttpApp {
  /**
   * koa: every route but the plain `POST /notify` and the Pusher API's four routes (which it still
   * serves when reached).
   */
  app: Koa;
  /**
   * The request listener to serve: `POST /notify` first (notify-route.ts, no koa), the Pusher API
   * (pusher/pusher-route.ts, no koa), then koa.
   */
  listener: http.RequestListener;
}

/**
 * The HTTP transport: reads the raw body's bytes and hands them to the dispatch. Built without
 * listening (`listener` serves it), so tests and `start()` share it.
 */
export function createHttpApp(dispatch: Dispatch, opts: HttpAppOptions): HttpApp {
  const app = new Koa();
  // Every error becomes a JSON body here, so koa's default stderr logging would only duplicate it.
  app.silent = true;
  const router = new Router();
  const notify = notifyRoute(dispatch, opts);
  for (const path of NOTIFY_PATHS) router.post(path, notify.middleware);
  if (opts.eventStatus) router.post(STATUS_PATH, opts.eventStatus);
  if (opts.notifyBatch) for (const path of NOTIFY_BATCH_PATHS) router.post(path, opts.notifyBatch);
  if (opts.inbox) {
    router.post(INBOX_HISTORY_PATH, opts.inbox.history);
    router.post(INBOX_READ_PATH, opts.inbox.read);
  }
  if (opts.push) mountPushRoutes(router, opts.push);
  if (opts.pusher) mountPusherRoutes(router, opts.pusher);
  if (opts.topics) mountTopicRoutes(router, opts.topics);
  // The push routes are the browser's too: a page registers its subscription from its own domain.
  const push = opts.push ? pushCorsMethods : () => undefined;
  // So are the topic routes: the same web keys, held to the same Origin, as /notify.
  const topics = opts.topics ? topicCorsMethods : () => undefined;

  app.use(errorBoundary(opts.logger, opts.answer, opts.refusals));
  if (opts.ops) app.use(opsRoutes(opts.ops));
  app.use(cors((path) => (CORS_PATHS.has(path) ? 'POST' : (push(path) ?? topics(path)))));
  app.use(unmatchedAsJson());
  app.use(router.routes());
  app.use(router.allowedMethods());
  const koa = app.callback();
  const pusher = opts.pusher ? pusherListener(opts.pusher) : () => false;
  return {
    app,
    listener: (req, res) => {
      if (!notify.serve(req, res) && !pusher(req, res)) void koa(req, res);
    },
  };
}

/**
 * The HTTP transport's one error boundary: every thrown error goes through kit's one mapping (a
 * HeraldError keeps its code, status and safe message; anything else is a 500 whose details go
 * to the log under a request id, never to the caller), and every dispatch, answered or refused,
 * is counted here once.
 */
function errorBoundary(
  logger: Logger,
  answer: Answer,
  refusals: HttpAppOptions['refusals'],
): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } catch (err) {
      // The route's pattern, never its parameters (a topic's name is the customer's).
      const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      refusals?.noteError(err, {
        route: typeof route === 'string' ? route : ctx.path,
        origin: ctx.get('Origin') || undefined,
      });
      respond(ctx, outcomeOfError(err, logger, { method: ctx.method, path: safePath(ctx.url) }));
    }
    // Only the notify routes' answers count as dispatches; a 404, 405 or preflight is not one.
    const outcome = ctx.state.outcome as Outcome | undefined;
    if (outcome && DISPATCH_PATHS.includes(ctx.path) && ctx.method === 'POST')
      answer('http', outcome, started);
  };
}

function respond(ctx: Context, outcome: Outcome): void {
  ctx.state.outcome = outcome;
  const reply = toHttp(outcome);
  ctx.status = reply.status;
  ctx.body = reply.body;
  setAnswerHeaders(ctx.res, reply);
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
      // Readable from any page: the SDK's probe of a socket URL mistakenly set to ingress-api
      // reads this 404 to say "wrong endpoint" (clients/sdk/src/probe.ts). It holds no secret.
      ctx.set('Access-Control-Allow-Origin', '*');
      throw new HeraldError(
        'not_found',
        `No route ${ctx.method} ${path}: dispatch events with POST ${NOTIFY_PATHS[0]}`,
      );
    }
  };
}

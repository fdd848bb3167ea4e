import { type NatsLink, sourceAddress } from '@herald/kit';
import { HeraldError } from '@herald/proto';
import type { Context, Middleware } from 'koa';
import { refuseWhileDown } from './nats-outage.js';
import type { RefusalLog } from './refusals/refusal-log.js';

/** What a keyed route beside `/notify` (push subscriptions, topics) checks before its handler. */
export interface RouteGuard {
  link?: NatsLink | undefined;
  /** Proxies in front that append to X-Forwarded-For (TRUSTED_PROXY_HOPS). */
  trustedProxyHops: number;
  /** The failed-authentication limit of every dispatch path: checked first, fed each 401. */
  checkSource(source: string | undefined): void;
  countFailure(source: string | undefined, err: unknown): void;
  /** Where a refusal attributed to a key is noted for the dashboard (issue 45); none when absent. */
  refusals?: Pick<RefusalLog, 'noteError'> | undefined;
}

export type RouteHandler = (ctx: Context & { params: Record<string, string> }) => Promise<void>;

/**
 * One route: the source's failed-key limit first, then a 503 while NATS is down (`unreachable`
 * says what could not be reached), then the handler; a HeraldError becomes the plain error shape
 * (with Retry-After when it has one), anything else goes to the server's error handler.
 */
export function guardedRoute(
  guard: RouteGuard,
  unreachable: string,
  handler: RouteHandler,
): Middleware {
  return async (ctx) => {
    const source = sourceAddress(ctx.req, guard.trustedProxyHops);
    try {
      guard.checkSource(source);
      refuseWhileDown(guard.link, unreachable);
      await handler(ctx as Context & { params: Record<string, string> });
    } catch (err) {
      guard.countFailure(source, err);
      const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      guard.refusals?.noteError(err, {
        route: typeof route === 'string' ? route : ctx.path,
        origin: ctx.get('Origin') || undefined,
      });
      if (!(err instanceof HeraldError)) throw err;
      ctx.status = err.status;
      ctx.body = err.toBody();
      if (err.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter));
    }
  };
}

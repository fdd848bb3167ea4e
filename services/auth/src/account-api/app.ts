import type http from 'node:http';
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import { accountRoutes } from './account-routes.js';
import { dashboardFiles } from './dashboard-files.js';
import { dashboardRoutes } from './dashboard-routes.js';
import type { AccountApiDeps } from './deps.js';
import { errorBoundary, unmatchedAsJson } from './error-boundary.js';
import { keyRoutes } from './key-routes.js';
import { originGuard } from './origin-guard.js';
import type { SessionState } from './session-auth.js';

export type OpsHandler = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

/**
 * A wing's routes on the account API: added to its router, with the deps every route shares. The
 * wing brings what it needs beyond them in the closure (billing: its service), so the account API
 * imports no wing; service.ts lists the mounts.
 */
export type RouteMount = (router: Router<SessionState>, deps: AccountApiDeps) => void;

/** The account API's own routes: accounts and sessions, keys, the dashboard's data. */
const CORE_ROUTES: readonly RouteMount[] = [accountRoutes, keyRoutes, dashboardRoutes];

/**
 * The account HTTP API (JSON, for the dashboard and scripts), its own routes and the wings'
 * `mounts`, with the ops endpoints on the same listener. Built without listening: serve
 * `app.callback()`.
 */
export function createAccountApi(
  deps: AccountApiDeps,
  mounts: readonly RouteMount[] = [],
  ops?: OpsHandler,
): Koa<SessionState> {
  const app = new Koa<SessionState>({ proxy: deps.settings.trustProxy });
  // Every error becomes a JSON body in the boundary, so koa's own stderr logging would duplicate it.
  app.silent = true;
  const router = new Router<SessionState>();
  for (const mount of [...CORE_ROUTES, ...mounts]) mount(router, deps);

  // Before the boundary, which marks every answer no-store: the app's hashed assets are cacheable.
  if (deps.dashboard?.dir) app.use(dashboardFiles(deps.dashboard.dir));
  app.use(errorBoundary(deps.logger));
  if (ops) app.use(opsRoutes(ops));
  app.use(originGuard(deps.settings.allowedOrigin, deps.dashboard?.dir !== undefined));
  app.use(unmatchedAsJson());
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

function opsRoutes(ops: OpsHandler): Middleware {
  return async (ctx, next) => {
    if (ops(ctx.req, ctx.res)) {
      // The ops handler writes the response itself (possibly later, for /readyz and /metrics).
      ctx.respond = false;
      return;
    }
    await next();
  };
}

import { HeraldError } from '@herald/proto';
import type { Middleware } from 'koa';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** True for methods that change state and so need CSRF protection. */
export function isStateChanging(method: string): boolean {
  return !SAFE_METHODS.has(method.toUpperCase());
}

/**
 * The Origin half of CSRF protection, and CORS for the dashboard. A state-changing request that
 * carries an Origin header must come from `allowedOrigin` (ACCOUNT_API_ORIGIN), else 403
 * `csrf_failed`; requests without Origin (scripts, curl) pass here and still need the session's
 * CSRF token (session-auth.ts). Only `allowedOrigin` gets CORS headers, with credentials, so no
 * other site can read an answer.
 */
export function originGuard(allowedOrigin: string, servesDashboard = false): Middleware {
  return async (ctx, next) => {
    const origin = ctx.get('Origin');
    ctx.vary('Origin');
    if (origin === allowedOrigin) {
      ctx.set('Access-Control-Allow-Origin', allowedOrigin);
      ctx.set('Access-Control-Allow-Credentials', 'true');
      if (ctx.method === 'OPTIONS') {
        ctx.set('Access-Control-Allow-Methods', 'GET, POST, PUT, DELETE');
        ctx.set('Access-Control-Allow-Headers', 'Content-Type, X-Herald-CSRF');
        ctx.set('Access-Control-Max-Age', '600');
        ctx.status = 204;
        return;
      }
    }
    // The dashboard served by this very listener over TLS (DASHBOARD_DIR) is same-origin: allowed
    // too. Only over TLS, so a page on plain http at the same host cannot pass for it.
    const sameOrigin = servesDashboard && ctx.secure && origin === ownOrigin(ctx);
    if (origin !== '' && isStateChanging(ctx.method) && origin !== allowedOrigin && !sameOrigin) {
      throw new HeraldError(
        'csrf_failed',
        `Origin ${JSON.stringify(origin)} may not change this account: requests must come from ${allowedOrigin} (ACCOUNT_API_ORIGIN), or from a script sending no Origin`,
        { field: 'Origin' },
      );
    }
    await next();
  };
}

/**
 * The origin this request was addressed to: its scheme and Host (X-Forwarded-* behind a trusted
 * proxy), normalised as browsers write an Origin (lower case, no default port). Not koa's
 * `ctx.origin`: since koa 3 that is the request's Origin header itself, so comparing the two
 * passed every Origin. A browser cannot choose the Host it sends, so a page on another site
 * arrives with its own Origin and this listener's Host, which differ; a rebinding hostname does
 * not help it either, as the TLS certificate would not name it. '' when the Host is unusable.
 */
function ownOrigin(ctx: { protocol: string; host: string }): string {
  if (ctx.host === '') return '';
  try {
    return new URL(`${ctx.protocol}://${ctx.host}`).origin;
  } catch {
    return '';
  }
}

import { HeraldError } from '@herald/proto';
import type { Middleware } from 'koa';
import type { Kysely } from 'kysely';
import type { AuthDb } from '../db-schema.js';
import { readCookie, SESSION_COOKIE } from './cookies.js';
import { isStateChanging } from './origin-guard.js';
import { csrfMatches, findSession, type Session } from './sessions.js';

/** The header carrying the CSRF token returned at login. */
export const CSRF_HEADER = 'X-Herald-CSRF';

export interface SessionState {
  session: Session;
}

/**
 * Requires a live session (401 `not_authenticated` otherwise) and puts it in `ctx.state.session`.
 * On a state-changing request it also requires `X-Herald-CSRF` to equal the session's CSRF token
 * (403 `csrf_failed`): a cross-site form can make the browser send the cookie (were SameSite
 * ever bypassed), but cannot read the token to send it back.
 */
export function requireSession(db: Kysely<AuthDb>, now: () => number): Middleware<SessionState> {
  return async (ctx, next) => {
    const token = readCookie(ctx.get('Cookie') || undefined, SESSION_COOKIE);
    const session = token ? await findSession(db, token, now()) : undefined;
    if (!session) {
      throw new HeraldError(
        'not_authenticated',
        'This needs a session: log in with POST /v1/sessions, then send its herald_session cookie',
        { field: SESSION_COOKIE },
      );
    }
    if (isStateChanging(ctx.method) && !csrfMatches(session, ctx.get(CSRF_HEADER) || undefined)) {
      throw new HeraldError(
        'csrf_failed',
        `${CSRF_HEADER} must carry the csrf value returned at login: send it with every request that changes something`,
        { field: CSRF_HEADER },
      );
    }
    ctx.state.session = session;
    await next();
  };
}

import { pusherRecipient } from '@herald/access';
import { HeraldError, PusherAppCreate } from '@herald/proto';
import type { RouteMount } from '../account-api/app.js';
import { parseBody, readJson } from '../account-api/json-body.js';
import { requireSession } from '../account-api/session-auth.js';
import { publishInvalidation, pusherAppMessage } from '../invalidation.js';
import {
  createPusherApp,
  deletePusherApp,
  findPusherApp,
  listPusherApps,
  rotatePusherSecret,
} from './store.js';

/** Characters of a Pusher user id the mapping route takes. */
const USER_ID_MAX = 200;

/**
 * The account's Pusher apps (docs/api.md, "Pusher protocol") as a mount of the account API: a
 * session (CSRF on every change), and every query names the session's account, so another
 * account's app is 404 `not_found` like one that does not exist. Each change broadcasts
 * `pusher_app` for the bound key, so the edge and ingress drop cached lookups at once. An account
 * holds at most `maxApps` (MAX_PUSHER_APPS_PER_ACCOUNT).
 */
export function pusherRoutes(maxApps: number): RouteMount {
  return (router, deps) => {
    const session = requireSession(deps.db, deps.now);
    const limit = deps.settings.bodyLimitBytes;
    const box = deps.settings.box;

    // The database holds the change; a failed broadcast leaves caches to expire within their TTL.
    const broadcast = async (keyId: string) => {
      try {
        await publishInvalidation(deps.nc, pusherAppMessage(keyId));
      } catch (err) {
        deps.logger.error(
          { err: err instanceof Error ? err.message : String(err), reason: 'pusher_app' },
          'invalidation broadcast failed: caches will catch up within their TTL',
        );
      }
    };

    router.get('/v1/pusher/apps', session, async (ctx) => {
      ctx.body = { apps: await listPusherApps(deps.db, ctx.state.session.account_id) };
    });

    router.post('/v1/pusher/apps', session, async (ctx) => {
      const body = parseBody(PusherAppCreate, await readJson(ctx, limit));
      const app = await createPusherApp(deps.db, box, ctx.state.session.account_id, body, {
        maxApps,
        now: new Date(deps.now()),
      });
      await broadcast(app.key_id);
      ctx.status = 201;
      ctx.body = app;
    });

    router.delete('/v1/pusher/apps/:app_id', session, async (ctx) => {
      const app = await deletePusherApp(
        deps.db,
        ctx.state.session.account_id,
        ctx.params.app_id ?? '',
      );
      await broadcast(app.key_id);
      ctx.status = 204;
    });

    router.post('/v1/pusher/apps/:app_id/rotate-secret', session, async (ctx) => {
      const app = await rotatePusherSecret(
        deps.db,
        box,
        ctx.state.session.account_id,
        ctx.params.app_id ?? '',
      );
      await broadcast(app.key_id);
      ctx.body = { app_id: app.app_id, key: app.key, secret: app.secret };
    });

    // The recipient a Pusher user id maps to (the dashboard's status lookup).
    router.get('/v1/pusher/apps/:app_id/users/:user_id', session, async (ctx) => {
      const app = await findPusherApp(
        deps.db,
        ctx.state.session.account_id,
        ctx.params.app_id ?? '',
      );
      const userId = ctx.params.user_id ?? '';
      if (userId.length === 0 || userId.length > USER_ID_MAX) {
        throw new HeraldError(
          'invalid_field',
          `user_id must be 1 to ${USER_ID_MAX} characters: the id your app signs users in with`,
          { field: 'user_id' },
        );
      }
      const recipient = pusherRecipient(app.app_id, userId, app.user_ids);
      if (recipient === undefined) {
        throw new HeraldError(
          'invalid_field',
          `user_id must be a UUID v4 for app ${app.app_id}, whose user ids are "uuid" (got "${userId}"): create the app with user_ids "any" to map any id`,
          { field: 'user_id' },
        );
      }
      ctx.body = { user_id: userId, recipient };
    });
  };
}

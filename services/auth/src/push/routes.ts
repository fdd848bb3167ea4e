import { PushClient } from '@herald/status-client';
import { z } from 'zod';
import type { RouteMount } from '../account-api/app.js';
import { parseBody, readJson } from '../account-api/json-body.js';
import { requireSession } from '../account-api/session-auth.js';
import { parseRecipient, parseSubscriptionId, parseVapidSubject } from './requests.js';

/** `POST /v1/push/vapid`. */
export const VapidBody = z.strictObject({
  subject: z
    .string({
      error:
        'subject must be a string: mailto:you@example.com or an https:// URL of yours (VAPID `sub`)',
    })
    .optional(),
});

const SubscriptionsQuery = z.object({
  recipient: z
    .string({ error: 'recipient must be given once: the recipient id your app notifies' })
    .optional(),
});

/**
 * The account's push set-up (docs/api.md, "Push") as a mount of the account API: a session (CSRF
 * on every change), and every request to the status service names the session's account, so
 * another account's subscription is 404 `not_found` like one that does not exist. No answer from
 * the status service within `timeoutMs` (PUSH_API_TIMEOUT_MS) is 503 `unavailable`.
 */
export function pushRoutes(timeoutMs: number): RouteMount {
  return (router, deps) => {
    const session = requireSession(deps.db, deps.now);
    const client = new PushClient(deps.nc, timeoutMs);
    const limit = deps.settings.bodyLimitBytes;

    router.get('/v1/push', session, async (ctx) => {
      ctx.body = (await client.status(ctx.state.session.account_id)).credentials;
    });

    // A new VAPID key pair (the private key sealed by the status service): the public key answers.
    router.post('/v1/push/vapid', session, async (ctx) => {
      const body = parseBody(VapidBody, await readJson(ctx, limit));
      const subject =
        body.subject === undefined ? undefined : parseVapidSubject(body.subject, 'subject');
      const vapid = await client.configureVapid(ctx.state.session.account_id, subject);
      ctx.body = { public_key: vapid.public_key, subject: vapid.subject };
    });

    router.get('/v1/push/subscriptions', session, async (ctx) => {
      const query = parseBody(SubscriptionsQuery, { ...ctx.query });
      const recipient = query.recipient === undefined ? undefined : parseRecipient(query.recipient);
      const listed = await client.list(ctx.state.session.account_id, recipient);
      ctx.body = { subscriptions: listed.subscriptions };
    });

    router.delete('/v1/push/subscriptions/:id', session, async (ctx) => {
      const id = parseSubscriptionId(ctx.params.id ?? '');
      ctx.body = (await client.unsubscribe(ctx.state.session.account_id, id)).subscription;
    });

    router.post('/v1/push/subscriptions/:id/test', session, async (ctx) => {
      const id = parseSubscriptionId(ctx.params.id ?? '');
      const tested = await client.test(ctx.state.session.account_id, id);
      ctx.body = {
        http_status: tested.http_status,
        error: tested.error,
        latency_ms: tested.latency_ms,
      };
    });
  };
}

import { PushClient } from '@herald/status-client';
import { z } from 'zod';
import type { RouteMount } from '../account-api/app.js';
import { parseBody, readJson } from '../account-api/json-body.js';
import { requireSession } from '../account-api/session-auth.js';
import {
  parseApnsKey,
  parseFcmServiceAccount,
  parseRecipient,
  parseSubscriptionId,
  parseVapidSubject,
} from './requests.js';

/** `POST /v1/push/vapid`. */
export const VapidBody = z.strictObject({
  subject: z
    .string({
      error:
        'subject must be a string: mailto:you@example.com or an https:// URL of yours (VAPID `sub`)',
    })
    .optional(),
});

/** `POST /v1/push/fcm`: the service-account key file, as JSON or as its text. */
export const FcmBody = z.strictObject({
  service_account: z.unknown().refine((v) => v !== undefined, {
    message:
      'service_account is required: the Firebase service-account key file (its JSON object, or its text)',
  }),
});

/** `POST /v1/push/apns`: the .p8 key's text and its ids. */
export const ApnsBody = z.strictObject({
  key_pem: z.unknown(),
  key_id: z.unknown(),
  team_id: z.unknown(),
  topic: z.unknown(),
  sandbox: z.boolean({ error: 'sandbox must be true or false' }).optional(),
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

    // FCM HTTP v1: the service account (its private key sealed by the status service).
    router.post('/v1/push/fcm', session, async (ctx) => {
      const body = parseBody(FcmBody, await readJson(ctx, limit));
      const sa = parseFcmServiceAccount(body.service_account, 'service_account');
      ctx.body = (await client.configureFcm(ctx.state.session.account_id, sa)).credentials;
    });

    // APNs: the token key (sealed by the status service) and where its pushes go.
    router.post('/v1/push/apns', session, async (ctx) => {
      const body = parseBody(ApnsBody, await readJson(ctx, limit));
      const k = parseApnsKey({ ...body, sandbox: body.sandbox ?? false }, (m) => m);
      ctx.body = (await client.configureApns(ctx.state.session.account_id, k)).credentials;
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

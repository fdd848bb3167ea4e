import {
  WEBHOOK_ATTEMPTS_MAX,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_URL_MAX,
  type WebhookEndpoint,
  WebhookEventType,
} from '@herald/proto';
import { WebhookClient } from '@herald/status-client';
import { z } from 'zod';
import type { RouteMount } from '../account-api/app.js';
import { parseBody, readJson } from '../account-api/json-body.js';
import { requireSession } from '../account-api/session-auth.js';
import { parseSince } from './requests.js';

const TYPES = WEBHOOK_EVENT_TYPES.join(', ');

/** `POST /v1/webhooks`. */
export const CreateWebhookBody = z.strictObject({
  url: z
    .string({ error: 'url is required: the https URL your backend receives webhooks at' })
    .min(1, 'url is required: the https URL your backend receives webhooks at')
    .max(WEBHOOK_URL_MAX, `url must be at most ${WEBHOOK_URL_MAX} characters`),
  events: z
    .array(WebhookEventType, {
      error: `events must be a JSON array of event types from ${TYPES} (leave it out for every type)`,
    })
    .optional(),
});

/** `POST /v1/webhooks/:id/replay`. */
export const ReplayBody = z.strictObject({
  since: z.string({
    error:
      'since is required: an ISO 8601 date-time with its zone (2025-07-01T12:00:00Z); every transition at or after it is sent again',
  }),
});

const AttemptsQuery = z.object({
  limit: z.coerce
    .number({ error: `limit must be a whole number from 1 to ${WEBHOOK_ATTEMPTS_MAX}` })
    .int(`limit must be a whole number from 1 to ${WEBHOOK_ATTEMPTS_MAX}`)
    .min(1, `limit must be at least 1`)
    .max(WEBHOOK_ATTEMPTS_MAX, `limit must be at most ${WEBHOOK_ATTEMPTS_MAX}`)
    .optional(),
});

/** `create` and `rotate-secret` answer the endpoint with its secret, shown this once. */
const withSecret = (endpoint: WebhookEndpoint, secret: string) => ({ ...endpoint, secret });

/**
 * The account's webhook endpoints (docs/api.md, "Webhooks") as a mount of the account API: a
 * session (CSRF on every change), and every request to the status service names the session's
 * account, so another account's endpoint is 404 `not_found` like one that does not exist. No
 * answer from the status service within `timeoutMs` (WEBHOOK_API_TIMEOUT_MS) is 503 `unavailable`.
 */
export function webhookRoutes(timeoutMs: number): RouteMount {
  return (router, deps) => {
    const session = requireSession(deps.db, deps.now);
    const client = new WebhookClient(deps.nc, timeoutMs);
    const limit = deps.settings.bodyLimitBytes;

    router.get('/v1/webhooks', session, async (ctx) => {
      const listed = await client.list(ctx.state.session.account_id);
      ctx.body = { endpoints: listed.endpoints };
    });

    router.post('/v1/webhooks', session, async (ctx) => {
      const body = parseBody(CreateWebhookBody, await readJson(ctx, limit));
      const created = await client.create(ctx.state.session.account_id, body.url, body.events);
      ctx.status = 201;
      ctx.body = withSecret(created.endpoint, created.secret);
    });

    router.get('/v1/webhooks/:id', session, async (ctx) => {
      ctx.body = (await client.get(ctx.params.id ?? '', ctx.state.session.account_id)).endpoint;
    });

    router.delete('/v1/webhooks/:id', session, async (ctx) => {
      ctx.body = (await client.delete(ctx.params.id ?? '', ctx.state.session.account_id)).endpoint;
    });

    router.post('/v1/webhooks/:id/rotate-secret', session, async (ctx) => {
      const rotated = await client.rotateSecret(ctx.params.id ?? '', ctx.state.session.account_id);
      ctx.body = withSecret(rotated.endpoint, rotated.secret);
    });

    router.post('/v1/webhooks/:id/enable', session, async (ctx) => {
      ctx.body = (await client.enable(ctx.params.id ?? '', ctx.state.session.account_id)).endpoint;
    });

    router.get('/v1/webhooks/:id/attempts', session, async (ctx) => {
      const query = parseBody(AttemptsQuery, { ...ctx.query });
      const answer = await client.attempts(
        ctx.params.id ?? '',
        ctx.state.session.account_id,
        query.limit,
      );
      ctx.body = { attempts: answer.attempts };
    });

    router.post('/v1/webhooks/:id/test', session, async (ctx) => {
      const queued = await client.test(ctx.params.id ?? '', ctx.state.session.account_id);
      ctx.status = 202;
      ctx.body = { message_id: queued.message_id, queued: queued.queued };
    });

    router.post('/v1/webhooks/:id/replay', session, async (ctx) => {
      const body = parseBody(ReplayBody, await readJson(ctx, limit));
      const since = parseSince(body.since);
      const queued = await client.replay(ctx.params.id ?? '', since, ctx.state.session.account_id);
      ctx.status = 202;
      ctx.body = { queued: queued.queued };
    });
  };
}

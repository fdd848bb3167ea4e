import type { PusherAppVerifier, VerifiedPusherApp } from '@herald/access';
import { type Logger, safePath, sourceAddress } from '@herald/kit';
import { HeraldError, PUSHER_APP_ID, PUSHER_LIMITS, pusherSubjects } from '@herald/proto';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { type Answer, outcomeOfError } from '../answer.js';
import { authoriseAppKey } from '../authorise.js';
import type { DispatchVerified } from '../dispatch.js';
import { readJsonBody } from '../http-body.js';
import type { IngressMetrics } from '../metrics.js';
import { type Outcome, UNAVAILABLE_RETRY_AFTER_S } from '../outcome.js';
import type { Pipeline } from '../pipeline.js';
import { type PusherLimits, pusherBodyLimit } from './pusher-env.js';
import { planDeliveries, recipientOf } from './pusher-plan.js';
import { checkUserId, type PusherRouteKind, parsePusherBody } from './pusher-request.js';
import { sendDeliveries } from './pusher-send.js';
import { checkSignature, queryParams } from './pusher-signature.js';

export interface PusherRouteDeps {
  apps: Pick<PusherAppVerifier, 'lookup'>;
  pipeline: Pick<
    Pipeline,
    'checkSource' | 'countFailure' | 'refuseWhileDown' | 'rateLimiter' | 'publisher'
  >;
  dispatchVerified: DispatchVerified;
  limits: PusherLimits;
  /** PAYLOAD_LIMIT_BYTES: a durable event's envelope must fit it. */
  payloadLimitBytes: number;
  trustedProxyHops: number;
  /** Counts the durable events as dispatches (transport `pusher`). */
  answer: Answer;
  metrics: Pick<IngressMetrics, 'pusherRequests'>;
  logger: Logger;
  /** Epoch ms. */
  now: () => number;
}

/** The Pusher HTTP API's routes on ingress's listener, by what each does. */
export const PUSHER_ROUTES: Record<PusherRouteKind, string> = {
  events: '/apps/:app_id/events',
  batch_events: '/apps/:app_id/batch_events',
  user_events: '/apps/:app_id/users/:user_id/events',
  terminate_connections: '/apps/:app_id/users/:user_id/terminate_connections',
};

/** The Herald answer headers: each durable event's id and `sent`/`queued`, in request order. */
export const HERALD_ID_HEADER = 'X-Herald-Id';
export const HERALD_STATUS_HEADER = 'X-Herald-Status';

/**
 * Pusher's signed HTTP API (issue 41, docs/api.md "Pusher protocol"), for the stock `pusher`
 * server libraries. Each request: the source's failed authentications, the body read within its
 * limit, the app looked up by its id (its secret and bound key, cached), the signature, the body
 * parsed and held to the limits, the bound key authorised for each recipient, then the deliveries
 * (pusher-send.ts). Answers Pusher's 200 `{}`; a refusal is Pusher-style plain text with the
 * error's status, also when one durable event of several was refused or failed.
 */
export function mountPusherRoutes(router: Router, deps: PusherRouteDeps): void {
  const bodyLimit = pusherBodyLimit(deps.limits, PUSHER_LIMITS.channelName);
  for (const [kind, path] of Object.entries(PUSHER_ROUTES) as [PusherRouteKind, string][]) {
    router.post(path, async (ctx) => {
      const started = performance.now();
      const source = sourceAddress(ctx.req, deps.trustedProxyHops);
      let durable: Outcome[] = [];
      let body = '{}';
      try {
        deps.pipeline.checkSource(source);
        ({ durable, body } = await handle(ctx, kind, deps, bodyLimit));
      } catch (err) {
        deps.pipeline.countFailure(source, err);
        const refused = outcomeOfError(err, deps.logger, {
          method: ctx.method,
          path: safePath(ctx.url),
        });
        durable = [refused];
      }
      if (durable.length > 0) deps.answer.batch('pusher', durable.filter(hasId), started);
      respond(ctx, kind, durable, body, deps.metrics);
    });
  }
}

async function handle(
  ctx: Context,
  kind: PusherRouteKind,
  deps: PusherRouteDeps,
  bodyLimit: number,
): Promise<{ durable: Outcome[]; body: string }> {
  const encoding = ctx.get('Content-Encoding');
  if (encoding !== '' && encoding.toLowerCase() !== 'identity') {
    throw new HeraldError(
      'unsupported_content_type',
      'Content-Encoding is not supported: send the body uncompressed',
      { field: 'Content-Encoding' },
    );
  }
  const body = await readJsonBody(ctx.req, bodyLimit).catch((err: unknown) => {
    if (!(err instanceof HeraldError) || err.code !== 'payload_too_large') throw err;
    ctx.set('Connection', 'close');
    throw new HeraldError(
      'payload_too_large',
      `The body is larger than ${bodyLimit} bytes, what the PUSHER_MAX_* limits allow: send fewer or smaller events`,
      { field: 'body' },
    );
  });
  const { app, key } = await lookupApp(deps, String(ctx.params.app_id ?? ''));
  checkSignature(
    {
      method: ctx.method,
      path: (ctx.req.url ?? '').split('?')[0] ?? '',
      params: queryParams(ctx.querystring),
      body,
    },
    app,
    deps.now() / 1000,
    deps.limits.timestampSkewS,
  );
  // The router has percent-decoded it already (the signature covers the path as sent).
  const userId: string | undefined = ctx.params.user_id;
  const parsed = parsePusherBody(kind, body, deps.limits, userId);
  const now = deps.now();
  if (kind === 'terminate_connections') {
    const recipient = recipientOf(app, checkUserId(userId ?? ''));
    authoriseAppKey(key, recipient, now);
    deps.pipeline.refuseWhileDown();
    const subject = pusherSubjects.terminate(app.account_id, recipient);
    deps.pipeline.publisher.publish(subject, JSON.stringify({ v: 1, app_id: app.app_id }));
    return { durable: [], body: '{}' };
  }
  const deliveries = planDeliveries(parsed.events, app, deps.payloadLimitBytes);
  authoriseAppKey(key, undefined, now);
  for (const d of deliveries) if (d.kind === 'durable') authoriseAppKey(key, d.recipient, now);
  deps.pipeline.refuseWhileDown();
  const durable = await sendDeliveries(deliveries, key, {
    dispatchVerified: deps.dispatchVerified,
    rateLimiter: deps.pipeline.rateLimiter,
    publisher: deps.pipeline.publisher,
    logger: deps.logger,
  });
  return { durable, body: okBody(parsed.batchInfo, parsed.events.length) };
}

/** The app of the path's id; an unknown one is 401, as a bad signature is (and counted so). */
async function lookupApp(deps: PusherRouteDeps, appId: string): Promise<VerifiedPusherApp> {
  const unknown = () =>
    new HeraldError(
      'invalid_api_key',
      `Unknown app_id ${JSON.stringify(appId.slice(0, 24))}: use the app id pusher-app create printed`,
      { field: 'app_id' },
    );
  if (!PUSHER_APP_ID.test(appId)) throw unknown();
  deps.pipeline.refuseWhileDown();
  try {
    return await deps.apps.lookup({ app_id: appId });
  } catch (err) {
    if (err instanceof HeraldError && err.code === 'invalid_api_key') throw unknown();
    throw err;
  }
}

const hasId = (o: Outcome): boolean => o.id !== undefined;

/**
 * Writes the answer: `okBody` with 200, or the first refusal's status with its message as plain
 * text. Either way the accepted durable events' ids and statuses go in the X-Herald-Id and
 * X-Herald-Status headers, in request order.
 */
function respond(
  ctx: Context,
  route: PusherRouteKind,
  outcomes: readonly Outcome[],
  okBody: string,
  metrics: PusherRouteDeps['metrics'],
): void {
  const accepted = outcomes.filter((o) => o.kind === 'sent' || o.kind === 'queued');
  if (accepted.length > 0) {
    ctx.set(HERALD_ID_HEADER, accepted.map((o) => o.id).join(','));
    ctx.set(HERALD_STATUS_HEADER, accepted.map((o) => o.kind).join(','));
  }
  const bad = outcomes.find(
    (o): o is Extract<Outcome, { error: unknown }> => o.kind === 'refused' || o.kind === 'failed',
  );
  if (bad === undefined) {
    metrics.pusherRequests.inc({ route, outcome: 'ok' });
    ctx.status = 200;
    ctx.type = 'application/json';
    ctx.body = okBody;
    return;
  }
  metrics.pusherRequests.inc({ route, outcome: bad.kind });
  const { error } = bad;
  ctx.status = error.status;
  ctx.type = 'text/plain; charset=utf-8';
  ctx.body = error.message;
  const retryAfter =
    error.retryAfter ?? (error.code === 'unavailable' ? UNAVAILABLE_RETRY_AFTER_S : undefined);
  if (retryAfter !== undefined) ctx.set('Retry-After', String(retryAfter));
  if (error.code === 'auth_failures') ctx.set('Connection', 'close');
}

/** Pusher's success body: `{}`, or for a batch that asked for `info` one `{}` per event. */
export function okBody(batchInfo: boolean, events: number): string {
  return batchInfo ? JSON.stringify({ batch: Array.from({ length: events }, () => ({})) }) : '{}';
}

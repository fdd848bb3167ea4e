import type http from 'node:http';
import { authorizeRecipient } from '@herald/access';
import { type Logger, safePath, sourceAddress } from '@herald/kit';
import { HeraldError, PUSHER_LIMITS, pusherSubjects } from '@herald/proto';
import type Router from '@koa/router';
import { type Answer, outcomeOfError } from '../answer.js';
import { authoriseAppKey } from '../authorise.js';
import type { DispatchVerified } from '../dispatch.js';
import { readJsonBody } from '../http-body.js';
import type { IngressMetrics } from '../metrics.js';
import { type Outcome, UNAVAILABLE_RETRY_AFTER_S } from '../outcome.js';
import type { Pipeline } from '../pipeline.js';
import { type PusherLimits, pusherBodyLimit } from './pusher-env.js';
import { cachedApp, lookupApp, type PusherApps } from './pusher-lookup.js';
import { planDeliveries, recipientOf } from './pusher-plan.js';
import { checkUserId, type PusherRouteKind, parsePusherBody } from './pusher-request.js';
import { sendDeliveries } from './pusher-send.js';
import { checkSignature, queryParams } from './pusher-signature.js';

export interface PusherRouteDeps {
  apps: PusherApps;
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

/** One Pusher API request, however it arrived (koa's router or the listener's own match). */
export interface PusherCall {
  req: http.IncomingMessage;
  kind: PusherRouteKind;
  /** The path's parameters, percent-decoded (a bad escape left as sent), as koa's router does. */
  appId: string;
  userId: string | undefined;
}

/** The answer to write: status, full content type, body, and the headers beside them in order. */
export interface PusherAnswer {
  status: number;
  type: string;
  body: string;
  headers: Array<[name: string, value: string]>;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';

/**
 * Pusher's signed HTTP API (issue 41, docs/api.md "Pusher protocol"), for the stock `pusher`
 * server libraries. Each request: the source's failed authentications, the body read within its
 * limit, the app looked up by its id (its secret and bound key, cached), the signature, the body
 * parsed and held to the limits, the bound key authorised for each recipient, then the deliveries
 * (pusher-send.ts). Answers Pusher's 200 `{}`; a refusal is Pusher-style plain text with the
 * error's status, also when one durable event of several was refused or failed.
 */
export function pusherApi(deps: PusherRouteDeps): (call: PusherCall) => Promise<PusherAnswer> {
  const bodyLimit = pusherBodyLimit(deps.limits, PUSHER_LIMITS.channelName);
  return async (call) => {
    const started = performance.now();
    const source = sourceAddress(call.req, deps.trustedProxyHops);
    const headers: PusherAnswer['headers'] = [];
    let durable: Outcome[] = [];
    let body = '{}';
    try {
      deps.pipeline.checkSource(source);
      ({ durable, body } = await handle(call, deps, bodyLimit, headers));
    } catch (err) {
      deps.pipeline.countFailure(source, err);
      const refused = outcomeOfError(err, deps.logger, {
        method: call.req.method,
        path: safePath(call.req.url),
      });
      durable = [refused];
    }
    // `sendToUser`'s one event is counted as a single dispatch is (no list, no tally).
    if (durable.length === 1) {
      const [only] = durable as [Outcome];
      if (hasId(only)) deps.answer('pusher', only, started);
    } else if (durable.length > 0) deps.answer.batch('pusher', durable.filter(hasId), started);
    return answerOf(call.kind, durable, body, deps.metrics, headers);
  };
}

/** The routes on koa's router: what the listener's own match (`pusherListener`) leaves to koa. */
export function mountPusherRoutes(router: Router, deps: PusherRouteDeps): void {
  const api = pusherApi(deps);
  for (const [kind, path] of Object.entries(PUSHER_ROUTES) as [PusherRouteKind, string][]) {
    router.post(path, async (ctx) => {
      const a = await api({
        req: ctx.req,
        kind,
        appId: String(ctx.params.app_id ?? ''),
        userId: ctx.params.user_id,
      });
      for (const [name, value] of a.headers) ctx.set(name, value);
      ctx.status = a.status;
      ctx.type = a.type;
      ctx.body = a.body;
    });
  }
}

/** The four routes exactly as sent (no trailing slash, case as written): koa's router has the rest. */
const ROUTE =
  /^\/apps\/([^/?]+)\/(?:(events|batch_events)|users\/([^/?]+)\/(events|terminate_connections))(?:\?|$)/;

function decoded(text: string): string {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The Pusher API straight from node's request listener, before koa, as `POST /notify` is served
 * (notify-route.ts): no route here needs koa's context, middleware chain or router match, which
 * cost a Pusher request more ingress CPU than `/notify` spends on a whole dispatch
 * (docs/benchmarks.md, figure 9). Says whether it took the request; the same `pusherApi` answers
 * either way, so both paths answer alike (no CORS: the Pusher paths are server-to-server).
 */
export function pusherListener(
  deps: PusherRouteDeps,
): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  const api = pusherApi(deps);
  return (req, res) => {
    if (req.method !== 'POST') return false;
    const m = ROUTE.exec(req.url ?? '');
    if (!m) return false;
    const userId = m[3] === undefined ? undefined : decoded(m[3]);
    const kind: PusherRouteKind =
      (m[2] as PusherRouteKind | undefined) ??
      (m[4] === 'events' ? 'user_events' : 'terminate_connections');
    api({ req, kind, appId: decoded(m[1] ?? ''), userId }).then(
      (a) => write(res, a),
      (err: unknown) => {
        // Only a bug in answering gets here (the request's own errors are answers).
        deps.logger.error({ err }, 'could not answer a Pusher API request');
        res.destroy();
      },
    );
    return true;
  };
}

function write(res: http.ServerResponse, a: PusherAnswer): void {
  // The client went away: nobody reads the answer (koa skips it the same way).
  if (res.writableEnded || res.socket?.writable === false) return;
  // One flat list to writeHead: no header object is built and checked name by name.
  const flat: string[] = [];
  for (const [name, value] of a.headers) flat.push(name, value);
  flat.push('Content-Type', a.type, 'Content-Length', String(Buffer.byteLength(a.body)));
  res.writeHead(a.status, flat);
  res.end(a.body);
}

async function handle(
  call: PusherCall,
  deps: PusherRouteDeps,
  bodyLimit: number,
  headers: PusherAnswer['headers'],
): Promise<{ durable: Outcome[]; body: string }> {
  const { req, kind } = call;
  const encoding = String(req.headers['content-encoding'] ?? '');
  if (encoding !== '' && encoding.toLowerCase() !== 'identity') {
    throw new HeraldError(
      'unsupported_content_type',
      'Content-Encoding is not supported: send the body uncompressed',
      { field: 'Content-Encoding' },
    );
  }
  const body = await readJsonBody(req, bodyLimit).catch((err: unknown) => {
    if (!(err instanceof HeraldError) || err.code !== 'payload_too_large') throw err;
    headers.push(['Connection', 'close']);
    throw new HeraldError(
      'payload_too_large',
      `The body is larger than ${bodyLimit} bytes, what the PUSHER_MAX_* limits allow: send fewer or smaller events`,
      { field: 'body' },
    );
  });
  const { app, key } = cachedApp(deps, call.appId) ?? (await lookupApp(deps, call.appId));
  const url = req.url ?? '';
  const q = url.indexOf('?');
  checkSignature(
    {
      method: req.method ?? 'POST',
      path: q < 0 ? url : url.slice(0, q),
      params: queryParams(q < 0 ? '' : url.slice(q + 1)),
      body,
    },
    app,
    deps.now() / 1000,
    deps.limits.timestampSkewS,
  );
  // Percent-decoded already (the signature covers the path as sent).
  const { userId } = call;
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
  // The key's use and scope once for the request, then only the recipient rule per recipient
  // (the same refusals in the same order as the whole check for each).
  authoriseAppKey(key, undefined, now);
  let last: string | undefined;
  for (const d of deliveries) {
    if (d.kind !== 'durable' || d.recipient === last) continue;
    authorizeRecipient(key, d.recipient, 'http');
    last = d.recipient;
  }
  deps.pipeline.refuseWhileDown();
  const durable = await sendDeliveries(deliveries, key, {
    dispatchVerified: deps.dispatchVerified,
    rateLimiter: deps.pipeline.rateLimiter,
    publisher: deps.pipeline.publisher,
    logger: deps.logger,
  });
  return { durable, body: okBody(parsed.batchInfo, parsed.events.length) };
}

const hasId = (o: Outcome): boolean => o.id !== undefined;

/**
 * The answer: `okBody` with 200, or the first refusal's status with its message as plain text.
 * Either way the accepted durable events' ids and statuses go in the X-Herald-Id and
 * X-Herald-Status headers, in request order.
 */
function answerOf(
  route: PusherRouteKind,
  outcomes: readonly Outcome[],
  okBody: string,
  metrics: PusherRouteDeps['metrics'],
  headers: PusherAnswer['headers'],
): PusherAnswer {
  let ids = '';
  let kinds = '';
  for (const o of outcomes) {
    if (o.kind !== 'sent' && o.kind !== 'queued') continue;
    ids = ids === '' ? o.id : `${ids},${o.id}`;
    kinds = kinds === '' ? o.kind : `${kinds},${o.kind}`;
  }
  if (ids !== '') {
    headers.push([HERALD_ID_HEADER, ids]);
    headers.push([HERALD_STATUS_HEADER, kinds]);
  }
  const bad = outcomes.find(
    (o): o is Extract<Outcome, { error: unknown }> => o.kind === 'refused' || o.kind === 'failed',
  );
  if (bad === undefined) {
    metrics.pusherRequests.inc({ route, outcome: 'ok' });
    return { status: 200, type: JSON_TYPE, body: okBody, headers };
  }
  metrics.pusherRequests.inc({ route, outcome: bad.kind });
  const { error } = bad;
  const retryAfter =
    error.retryAfter ?? (error.code === 'unavailable' ? UNAVAILABLE_RETRY_AFTER_S : undefined);
  if (retryAfter !== undefined) headers.push(['Retry-After', String(retryAfter)]);
  if (error.code === 'auth_failures') headers.push(['Connection', 'close']);
  return { status: error.status, type: TEXT_TYPE, body: error.message, headers };
}

/** Pusher's success body: `{}`, or for a batch that asked for `info` one `{}` per event. */
export function okBody(batchInfo: boolean, events: number): string {
  return batchInfo ? JSON.stringify({ batch: Array.from({ length: events }, () => ({})) }) : '{}';
}

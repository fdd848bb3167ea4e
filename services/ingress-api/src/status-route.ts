import type { KeyVerifier } from '@herald/access';
import type { NatsLink } from '@herald/kit';
import { HeraldError, StatusLookupRequest } from '@herald/proto';
import { StatusClient } from '@herald/status-client';
import type { Middleware } from 'koa';
import type { NatsConnection } from 'nats';
import { checkJsonRequest, parseJsonBody, readJsonBody } from './http-body.js';
import { refuseWhileDown } from './nats-outage.js';

export interface StatusRouteOptions {
  nc: NatsConnection;
  /** The NATS connection's state: a lookup is refused at once while it is down. */
  link?: NatsLink;
  verifier: KeyVerifier;
  /** STATUS_IDS_MAX: most ids one lookup may name. */
  maxIds: number;
  /** STATUS_TIMEOUT_MS: how long the status service may take to answer. */
  timeoutMs: number;
  bodyLimitBytes: number;
}

/**
 * `POST /events/status`: each id's current status for the key's account, from the status service
 * (a NATS request). The account comes from the verified key, never from the body, so an id of
 * another account answers `unknown`, exactly like an id that never existed.
 *
 * A refusal is the plain error shape `{"error":{...}}`: the boundary's 503 body adds dispatch's
 * `"status":"Failed to send/save notification"`, which says nothing true of a lookup. Anything
 * but a HeraldError (a bug) still goes to the boundary, to be logged under a request id.
 */
export function statusRoute(opts: StatusRouteOptions): Middleware {
  const lookup = lookupRoute(opts);
  return async (ctx, next) => {
    try {
      await lookup(ctx, next);
    } catch (err) {
      if (!(err instanceof HeraldError)) throw err;
      ctx.status = err.status;
      ctx.body = err.toBody();
      if (err.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter));
    }
  };
}

function lookupRoute(opts: StatusRouteOptions): Middleware {
  const status = new StatusClient(opts.nc);
  return async (ctx) => {
    checkJsonRequest(
      ctx.get('Content-Type') || undefined,
      ctx.get('Content-Encoding') || undefined,
    );
    // A lookup is small and off the hot path: decoding it whole is fine here.
    const raw = new TextDecoder().decode(await readJsonBody(ctx.req, opts.bodyLimitBytes));
    const body = parseLookup(raw, opts.maxIds);
    refuseWhileDown(opts.link, 'no status could be read');
    const key = await opts.verifier.verify(body.api_key);
    const answer = await status.query(
      { v: 1, op: 'ids', account_id: key.account_id, ids: body.ids },
      {
        timeoutMs: opts.timeoutMs,
        unavailable:
          'The status service did not answer: retry shortly (event delivery is not affected)',
      },
    );
    ctx.body = { events: answer.events ?? [] };
  };
}

function parseLookup(raw: string, maxIds: number): StatusLookupRequest {
  const lookup = parseJsonBody(
    StatusLookupRequest,
    raw,
    '{"api_key": "...", "ids": ["<event id>", ...]}',
  );
  if (lookup.ids.length > maxIds) {
    throw new HeraldError(
      'invalid_field',
      `ids names ${lookup.ids.length} events but one lookup takes at most ${maxIds} (STATUS_IDS_MAX): split the lookup`,
      { field: 'ids' },
    );
  }
  return lookup;
}

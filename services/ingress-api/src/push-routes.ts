import {
  authorizeKeyUse,
  authorizeSubscriber,
  type KeyVerifier,
  type TokenPolicy,
} from '@herald/access';
import type { NatsLink } from '@herald/kit';
import { HeraldError, NOTIFY_PATHS, type VerifiedKey } from '@herald/proto';
import { PushClient } from '@herald/status-client';
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { NatsConnection } from 'nats';
import { guardedRoute } from './guarded-route.js';
import { checkJsonRequest, readJsonBody } from './http-body.js';
import {
  parseApiKey,
  parseSubscribeBody,
  parseSubscriberQuery,
  type SubscriberClaim,
} from './push-body.js';

export interface PushRouteOptions {
  nc: NatsConnection;
  link?: NatsLink | undefined;
  /** A verifier that asks auth for signing secrets: a token-requiring key's token is checked here. */
  verifier: Pick<KeyVerifier, 'verify'>;
  /** PUSH_TIMEOUT_MS: how long the status service may take to answer. */
  timeoutMs: number;
  /** PUSH_SUBSCRIPTION_MAX_BYTES: most bytes of a subscription body. */
  bodyLimitBytes: number;
  /** TOKEN_MAX_LIFETIME_MS and TOKEN_CLOCK_SKEW_MS, as the edge judges tokens. */
  tokenPolicy: TokenPolicy;
  /** Proxies in front that append to X-Forwarded-For (TRUSTED_PROXY_HOPS). */
  trustedProxyHops: number;
  /** The failed-authentication limit of every dispatch path: checked first, fed each 401. */
  checkSource(source: string | undefined): void;
  countFailure(source: string | undefined, err: unknown): void;
  /** Epoch ms. */
  now: () => number;
}

/** What a 503 names while NATS is down. */
const UNREACHABLE = 'push subscriptions could not be reached';
/** Where the push routes hang: under every base of the notify routes (`''`, `/bff_v001`). */
const BASES = NOTIFY_PATHS.map((path) => path.slice(0, -'/notify'.length));
const VAPID = '/push/vapid-public-key';
const SUBSCRIPTIONS = '/push/subscriptions';
const SUBSCRIPTION_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The Web Push routes (issue 40) browsers call on the key's own domain: the account's VAPID public
 * key, and registering or deleting one browser's push subscription for a recipient. A subscription
 * is authorised exactly as `/ws/connect` is (lib/access's `authorizeSubscriber`: key use and a web
 * key's Origin, recipient, subscribe scope, the recipient token of a key that requires one), since
 * it receives what that socket would. The account and key come from the verified key, never the
 * request, and a delete names the authorised recipient too, so one account's key can never touch
 * another's subscription. Refusals are the plain error shape `{"error":{...}}`.
 */
export function mountPushRoutes(router: Router, opts: PushRouteOptions): void {
  const push = new PushClient(opts.nc, opts.timeoutMs);
  for (const base of BASES) {
    router.get(
      base + VAPID,
      guardedRoute(opts, UNREACHABLE, async (ctx) => {
        const key = await opts.verifier.verify(parseApiKey(queryOf(ctx)));
        // Any key of the account (any client, any scope), used as its own rules allow.
        authorizeKeyUse(key, { client: key.client, origin: origin(ctx), now: opts.now() });
        const answer = await push.vapidPublicKey(key.account_id).catch(noVapidKey);
        ctx.body = { public_key: answer.public_key };
      }),
    );
    router.post(
      base + SUBSCRIPTIONS,
      guardedRoute(opts, UNREACHABLE, async (ctx) => {
        checkJsonRequest(
          ctx.get('Content-Type') || undefined,
          ctx.get('Content-Encoding') || undefined,
        );
        const raw = new TextDecoder().decode(await readJsonBody(ctx.req, opts.bodyLimitBytes));
        const body = parseSubscribeBody(raw, queryOf(ctx));
        const key = await subscriber(opts, ctx, body);
        const who = {
          account: key.account_id,
          keyId: key.id,
          recipient: body.recipient,
          device: body.device,
        };
        const answer =
          body.kind === 'webpush'
            ? await push.subscribe({ ...who, subscription: body.subscription })
            : await push.subscribeDevice({ ...who, kind: body.kind, token: body.deviceToken });
        ctx.status = answer.created ? 201 : 200;
        ctx.body = { id: answer.id };
      }),
    );
    router.delete(
      `${base + SUBSCRIPTIONS}/:id`,
      guardedRoute(opts, UNREACHABLE, async (ctx) => {
        const id = String(ctx.params.id ?? '');
        if (!SUBSCRIPTION_ID.test(id)) {
          throw new HeraldError(
            'invalid_field',
            'the subscription id must be the id POST /push/subscriptions answered',
            { field: 'id' },
          );
        }
        const claim = parseSubscriberQuery(queryOf(ctx));
        const key = await subscriber(opts, ctx, claim);
        await push.unsubscribe(key.account_id, id, claim.recipient);
        ctx.status = 204;
      }),
    );
  }
}

/** The methods a browser may preflight on `path` when it is a push route; undefined otherwise. */
export function pushCorsMethods(path: string): string | undefined {
  for (const base of BASES) {
    if (!path.startsWith(`${base}/push/`)) continue;
    const rest = path.slice(base.length);
    if (rest === VAPID) return 'GET';
    if (rest === SUBSCRIPTIONS) return 'POST';
    if (rest.startsWith(`${SUBSCRIPTIONS}/`)) return 'DELETE';
  }
  return undefined;
}

/** The key of a subscriber, verified and authorised as `/ws/connect` authorises a socket's. */
async function subscriber(
  opts: PushRouteOptions,
  ctx: Context,
  claim: SubscriberClaim,
): Promise<VerifiedKey> {
  const key = await opts.verifier.verify(claim.api_key);
  await authorizeSubscriber(key, {
    client: claim.client ?? key.client,
    origin: origin(ctx),
    recipient: claim.recipient,
    token: claim.token,
    policy: opts.tokenPolicy,
    now: opts.now(),
  });
  return key;
}

function noVapidKey(err: unknown): never {
  if (err instanceof HeraldError && err.code === 'not_found') {
    throw new HeraldError(
      'not_found',
      "This key's account has no Web Push (VAPID) key: its operator configures one with `npm run -s admin -- push configure --account ID --vapid generate`",
      { field: 'api_key' },
    );
  }
  throw err;
}

function queryOf(ctx: Context): URLSearchParams {
  return new URLSearchParams(ctx.querystring);
}

function origin(ctx: Context): string | undefined {
  return ctx.get('Origin') || undefined;
}

import { isIP } from 'node:net';
import type { Logger, SecretBox } from '@herald/kit';
import { isPublicAddress, parseTargetUrl } from '@herald/outbound';
import { HeraldError, PUSH_API_SUBJECT, PushRequest } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { NatsConnection, Subscription } from 'nats';
import { DEFAULT_VAPID_SUBJECT } from '../config.js';
import type { StatusDb } from '../db-schema.js';
import { serveRequests } from '../request-api.js';
import { configureVapid, credentialsView, publicKey } from './credentials.js';
import { buildMessage, collapseKey } from './message.js';
import type { PushMetrics } from './metrics.js';
import { configureApns, configureFcm } from './native-credentials.js';
import { classifyFor } from './outcome.js';
import { deviceEndpoint, PushProviders } from './providers.js';
import {
  findSubscription,
  listSubscriptions,
  subscribe,
  subscriptionView,
  unsubscribe,
} from './subscriptions.js';

/** Most subscriptions a `list` answers (an account's; a recipient's are capped lower). */
export const LIST_MAX = 1000;
/** A test push's TTL, seconds: a minute is enough to see it, and it never lingers. */
const TEST_TTL_S = 60;

export interface PushApiDeps {
  nc: NatsConnection;
  db: Kysely<StatusDb>;
  logger: Logger;
  metrics: PushMetrics;
  /** Seals VAPID private keys; undefined without WEBHOOK_SECRET_KEY (configure refuses). */
  box: SecretBox | undefined;
  providers: PushProviders;
  /** PUSH_VAPID_SUBJECT. */
  defaultSubject: string | undefined;
  /** PUSH_SUBSCRIPTIONS_PER_RECIPIENT_MAX. */
  cap: number;
  /** PUSH_ALLOW_PRIVATE. */
  allowPrivate: boolean;
}

/**
 * Answers PUSH_API_SUBJECT (auth's admin CLI and account API, ingress's subscription routes) in
 * the status queue group. Replies are proto's Push*Reply; a refusal keeps its error code. Every
 * operation names its account and touches only that account's rows.
 */
export function servePushApi(deps: PushApiDeps): Subscription {
  return serveRequests({
    nc: deps.nc,
    logger: deps.logger,
    subject: PUSH_API_SUBJECT,
    schema: PushRequest,
    what: 'push',
    run: (q) => run(deps, q),
  });
}

async function run(deps: PushApiDeps, q: PushRequest): Promise<Record<string, unknown>> {
  const { db } = deps;
  switch (q.op) {
    case 'configure-vapid': {
      const subject = q.subject ?? deps.defaultSubject;
      if (subject === undefined || !/^(mailto:\S+@\S+|https:\/\/\S+)$/.test(subject)) {
        throw new HeraldError(
          'invalid_field',
          'subject: give a mailto: or https: URI (VAPID contact) such as mailto:ops@example.com, or the operator sets PUSH_VAPID_SUBJECT',
          { field: 'subject' },
        );
      }
      const r = await configureVapid(db, deps.box, q.account_id, subject);
      deps.logger.info({ account: q.account_id, subject }, 'push VAPID key pair configured');
      if (q.subject === undefined && subject === DEFAULT_VAPID_SUBJECT) {
        deps.logger.warn(
          { account: q.account_id },
          'VAPID subject is the default that reaches nobody: pass --vapid-subject or set PUSH_VAPID_SUBJECT so push services can contact you',
        );
      }
      return r;
    }
    case 'status':
      return { credentials: await credentialsView(db, q.account_id) };
    case 'vapid-public-key':
      return publicKey(db, q.account_id);
    case 'subscribe': {
      checkEndpoint(q.subscription.endpoint, deps.allowPrivate);
      return register(deps, q, 'webpush', q.subscription.endpoint, q.subscription.keys);
    }
    case 'subscribe-device':
      return register(deps, q, q.kind, deviceEndpoint(q.kind, q.token), undefined);
    case 'configure-fcm':
      await configureFcm(db, deps.box, q.account_id, q.service_account);
      deps.logger.info(
        { account: q.account_id, project: q.service_account.project_id },
        'push FCM service account configured',
      );
      return { credentials: await credentialsView(db, q.account_id) };
    case 'configure-apns':
      await configureApns(db, deps.box, q.account_id, q.apns);
      deps.logger.info(
        {
          account: q.account_id,
          key_id: q.apns.key_id,
          topic: q.apns.topic,
          sandbox: q.apns.sandbox,
        },
        'push APNs key configured',
      );
      return { credentials: await credentialsView(db, q.account_id) };
    case 'unsubscribe': {
      const row = await unsubscribe(db, q.account_id, q.id, q.recipient);
      return { subscription: subscriptionView(row) };
    }
    case 'list':
      return {
        subscriptions: (await listSubscriptions(db, q.account_id, q.recipient, LIST_MAX)).map(
          subscriptionView,
        ),
      };
    case 'test': {
      const sub = await findSubscription(db, q.account_id, q.id);
      const creds = await deps.providers.credentials(q.account_id);
      if (!PushProviders.configured(creds, sub.kind)) {
        throw new HeraldError(
          'not_found',
          `this account has no ${sub.kind} credentials that open: run \`push configure\` for ${sub.kind} first`,
        );
      }
      const id = `test:${crypto.randomUUID()}`;
      const message = buildMessage(
        [
          {
            id,
            at: new Date(),
            spec: { after_ms: 0, ttl_s: TEST_TTL_S, title: 'Test notification' },
          },
        ],
        collapseKey(q.account_id, sub.recipient),
      );
      const r = await deps.providers.send(q.account_id, sub, creds, message, false, TEST_TTL_S);
      const v = classifyFor(sub.kind, r);
      deps.metrics.messages.inc({ provider: sub.kind, result: v.result });
      if (v.kind === 'gone') await unsubscribe(db, q.account_id, sub.id, undefined).catch(() => {});
      return { http_status: r.status, error: r.error, latency_ms: r.latencyMs };
    }
  }
}

/** Registers a subscription of any kind under the cap (the recipient's oldest make room). */
async function register(
  deps: PushApiDeps,
  q: { account_id: string; key_id: string; recipient: string; device?: string | undefined },
  kind: 'webpush' | 'fcm' | 'apns',
  endpoint: string,
  keys: { p256dh: string; auth: string } | undefined,
): Promise<Record<string, unknown>> {
  const r = await subscribe(
    deps.db,
    {
      account: q.account_id,
      keyId: q.key_id,
      recipient: q.recipient,
      device: q.device,
      kind,
      endpoint,
      keys,
    },
    deps.cap,
  );
  if (r.replaced.length > 0) {
    deps.logger.info(
      { account: q.account_id, replaced: r.replaced.length, cap: deps.cap },
      'push subscriptions replaced: the recipient held PUSH_SUBSCRIPTIONS_PER_RECIPIENT_MAX',
    );
  }
  return { id: r.id, created: r.created };
}

/**
 * A push endpoint as `subscribe` accepts it: https, no credentials, not a private address literal
 * (unless PUSH_ALLOW_PRIVATE). A name is judged when each push resolves it (the outbound client).
 */
function checkEndpoint(endpoint: string, allowPrivate: boolean): void {
  const refuse = (why: string) =>
    new HeraldError('invalid_field', `subscription.endpoint: ${why}`, {
      field: 'subscription.endpoint',
    });
  let url: URL;
  try {
    url = parseTargetUrl(endpoint, { allowPrivate });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw refuse(why.replace('WEBHOOK_ALLOW_PRIVATE', 'PUSH_ALLOW_PRIVATE'));
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isIP(host) !== 0 && !isPublicAddress(host)) {
    throw refuse(
      `${host} is not a public address: give the browser's push service endpoint (PUSH_ALLOW_PRIVATE=true lifts this rule, in development only)`,
    );
  }
}

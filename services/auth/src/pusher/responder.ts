import type { Logger, SecretBox } from '@herald/kit';
import {
  errorReply,
  HeraldError,
  type PlanCatalogue,
  PUSHER_APP_SUBJECT,
  PusherAppLookup,
  type PusherAppReply,
} from '@herald/proto';
import type { Kysely } from 'kysely';
import type { Msg, NatsConnection } from 'nats';
import type { AuthDb } from '../db-schema.js';
import type { AuthMetrics, VerifyResult } from '../metrics.js';
import { decodeRequest, type QueueResponder, serveAuthRequests } from '../queue-responder.js';
import { verifyKeyHash } from '../verification.js';
import { openAppSecret } from './secrets.js';
import { lookupPusherApp } from './store.js';

export interface PusherResponderDeps {
  nc: NatsConnection;
  db: Kysely<AuthDb>;
  catalogue: PlanCatalogue;
  logger: Logger;
  /** Opens app secrets (SECRET_ENCRYPTION_KEY); absent, every lookup of an app is `internal`. */
  box: SecretBox | undefined;
  metrics?: AuthMetrics;
  now?: () => number;
  dashboardConnections?: number;
}

export type PusherResponder = QueueResponder;

const MALFORMED: PusherAppReply = errorReply(
  new HeraldError(
    'invalid_api_key',
    'the rt.auth.pusher request was malformed: send {"v":1,"key":"<app key>"} or {"v":1,"app_id":"<app id>"}',
  ),
);

const INTERNAL: PusherAppReply = errorReply(
  new HeraldError('internal', 'the Pusher app lookup failed inside Herald: retry shortly'),
);

/**
 * Answers `rt.auth.pusher` (proto's PUSHER_APP_SUBJECT) in the `herald-auth` queue group: the app
 * by its key (the socket edge) or its id (ingress), its secret opened, and its bound key verified
 * by the very code `rt.auth.verify` runs, so a refusal (`key_revoked`, `plan_inactive`, …) is the
 * same ErrorReply. An unknown app is `invalid_api_key`. Only the edge and ingress may publish here
 * (proto/nats-permissions.ts): the reply carries the secret. Neither it nor the key is logged.
 */
export function startPusherResponder(deps: PusherResponderDeps): PusherResponder {
  const { nc, db, logger } = deps;
  const now = deps.now ?? Date.now;

  const answer = async (msg: Msg): Promise<{ reply: PusherAppReply; result: VerifyResult }> => {
    const request = PusherAppLookup.safeParse(decodeRequest(msg.data));
    if (!request.success) return { reply: MALFORMED, result: 'malformed' };
    const by = request.data;
    try {
      const row = await lookupPusherApp(db, 'key' in by ? { key: by.key } : { app_id: by.app_id });
      if (!row) {
        const named = 'key' in by ? 'has this key' : `has app_id ${by.app_id}`;
        const reply = errorReply(
          new HeraldError(
            'invalid_api_key',
            `no Pusher app ${named}: check the app's credentials (\`pusher-app list --account ID\`, GET /v1/pusher/apps)`,
          ),
        );
        return { reply, result: 'invalid_api_key' };
      }
      const verified = await verifyKeyHash(
        { db, catalogue: deps.catalogue, dashboardConnections: deps.dashboardConnections },
        row.key_hash,
        now(),
      );
      if (!verified.reply.ok) return { reply: verified.reply, result: verified.result };
      const app = {
        app_id: row.app_id,
        key: row.key,
        secret: openAppSecret(deps.box, row.app_id, row.secret),
        account_id: row.account_id,
        key_id: row.key_id,
        user_ids: row.user_ids,
        user_channel: row.user_channel,
      };
      return { reply: { v: 1, ok: true, app, key: verified.reply.key }, result: 'ok' };
    } catch (err) {
      // A database error, or a secret that cannot be opened (no or another SECRET_ENCRYPTION_KEY).
      logger.error({ err: describe(err) }, 'Pusher app lookup failed');
      return { reply: INTERNAL, result: 'internal' };
    }
  };

  return serveAuthRequests({
    nc,
    logger,
    subject: PUSHER_APP_SUBJECT,
    what: 'Pusher apps',
    answer,
    reply: (r) => r.reply,
    after: ({ result }) => deps.metrics?.pusherLookups.inc({ result }),
    describe,
  });
}

function describe(err: unknown): { name: string; code?: string; message: string } {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const code = (err as { code?: unknown }).code;
  // A driver message could quote a parameter: a key hash or an app key.
  const message = err.message.replace(/[0-9a-f]{20,}/gi, '[redacted]');
  return { name: err.name, message, ...(typeof code === 'string' ? { code } : {}) };
}

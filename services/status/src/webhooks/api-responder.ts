import type { Logger, SecretBox } from '@herald/kit';
import type { Resolver } from '@herald/outbound';
import { HeraldError, WEBHOOK_API_SUBJECT, WebhookRequest } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { NatsConnection, Subscription } from 'nats';
import type { StatusDb } from '../db-schema.js';
import { serveRequests } from '../request-api.js';
import { testBody } from './body.js';
import {
  deleteEndpoint,
  enableEndpoint,
  endpointView,
  findEndpoint,
  insertEndpoint,
  listEndpoints,
  newEndpointId,
  recentAttempts,
  rotateSecret,
} from './endpoint-store.js';
import { enqueue } from './outbox.js';
import { replaySince } from './replay.js';
import { issueSecret } from './secrets.js';
import { checkEndpointUrl } from './url-check.js';

/** Attempts an `attempts` request returns when it names no limit. */
const DEFAULT_ATTEMPTS = 20;

export interface WebhookApiDeps {
  nc: NatsConnection;
  db: Kysely<StatusDb>;
  logger: Logger;
  /** Seals endpoint secrets; undefined without WEBHOOK_SECRET_KEY (create and rotate refuse). */
  box: SecretBox | undefined;
  allowPrivate: boolean;
  overlapMs: number;
  queueMax: number;
  now: () => number;
  /** Told when messages were queued, so this instance's sender looks at once. */
  queued: () => void;
  resolver?: Resolver;
}

/**
 * Answers `rt.webhookapi.request` (auth's admin CLI and account API manage endpoints through it),
 * in the status queue group. Replies are proto's Webhook*Reply; a refusal keeps its error code.
 */
export function serveWebhookApi(deps: WebhookApiDeps): Subscription {
  return serveRequests({
    nc: deps.nc,
    logger: deps.logger,
    subject: WEBHOOK_API_SUBJECT,
    schema: WebhookRequest,
    what: 'webhook',
    run: (q) => run(deps, q),
  });
}

async function run(deps: WebhookApiDeps, q: WebhookRequest): Promise<Record<string, unknown>> {
  const { db } = deps;
  switch (q.op) {
    case 'create': {
      const url = await checkEndpointUrl(q.url, deps);
      const id = newEndpointId();
      const secret = issueSecret(deps.box, id);
      const events = [...new Set(q.events ?? [])];
      const row = await insertEndpoint(
        db,
        { id, account: q.account_id, url, events },
        secret.sealed,
      );
      deps.logger.info({ id, account: q.account_id }, 'webhook endpoint created');
      return { endpoint: endpointView(row), secret: secret.plain };
    }
    case 'list':
      return { endpoints: (await listEndpoints(db, q.account_id)).map(endpointView) };
    case 'get':
      return { endpoint: endpointView(await findEndpoint(db, q.id, q.account_id)) };
    case 'delete': {
      const row = await deleteEndpoint(db, q.id, q.account_id);
      deps.logger.info({ id: row.id, account: row.account_id }, 'webhook endpoint deleted');
      return { endpoint: endpointView(row) };
    }
    case 'rotate-secret': {
      const row = await findEndpoint(db, q.id, q.account_id);
      const secret = issueSecret(deps.box, row.id);
      const until = new Date(deps.now() + deps.overlapMs);
      const next = await rotateSecret(db, row, secret.sealed, until);
      deps.logger.info({ id: row.id, previous_until: until }, 'webhook secret rotated');
      return { endpoint: endpointView(next), secret: secret.plain };
    }
    case 'enable': {
      const row = await enableEndpoint(db, q.id, q.account_id);
      deps.logger.info({ id: row.id, account: row.account_id }, 'webhook endpoint enabled');
      deps.queued();
      return { endpoint: endpointView(row) };
    }
    case 'attempts': {
      const row = await findEndpoint(db, q.id, q.account_id);
      return { attempts: await recentAttempts(db, row.id, q.limit ?? DEFAULT_ATTEMPTS) };
    }
    case 'test': {
      const row = await findEndpoint(db, q.id, q.account_id);
      if (row.disabled_at !== null) {
        throw new HeraldError(
          'invalid_field',
          `the endpoint is disabled (${row.disabled_reason ?? 'no reason'}): enable it first`,
          { field: 'id' },
        );
      }
      const uuid = crypto.randomUUID();
      const msgId = `test:${uuid}`;
      const now = deps.now();
      const result = await db.transaction().execute((trx) =>
        enqueue(
          trx,
          [
            {
              endpointId: row.id,
              msgId,
              type: 'webhook.test',
              body: testBody(msgId, now),
              transitionAt: new Date(now),
            },
          ],
          deps.queueMax,
        ),
      );
      if (result.queued === 0) throw queueFull(row.id, deps.queueMax);
      deps.queued();
      return { message_id: msgId, queued: 1 };
    }
    case 'replay': {
      const row = await findEndpoint(db, q.id, q.account_id);
      const queued = await replaySince(db, row, q.since, deps.queueMax);
      deps.logger.info({ id: row.id, since: q.since, queued }, 'webhook replay queued');
      if (queued > 0) deps.queued();
      return { queued };
    }
  }
}

function queueFull(id: string, max: number): HeraldError {
  return new HeraldError(
    'queue_full',
    `endpoint ${id} already has ${max} messages waiting (WEBHOOK_ENDPOINT_QUEUE_MAX): wait for them to be sent`,
  );
}

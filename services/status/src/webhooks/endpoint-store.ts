import { randomUUID } from 'node:crypto';
import {
  HeraldError,
  WEBHOOK_EVENT_TYPES,
  type WebhookAttempt,
  type WebhookEndpoint,
  type WebhookEventType,
} from '@herald/proto';
import type { Kysely } from 'kysely';
import type { StatusDb, WebhookEndpointRow } from '../db-schema.js';

/** What every view shows of an endpoint (never its secret). */
export function endpointView(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    account_id: row.account_id,
    url: row.url,
    events: row.events as WebhookEventType[],
    created_at: row.created_at.toISOString(),
    disabled_at: row.disabled_at?.toISOString() ?? null,
    disabled_reason: row.disabled_reason,
    failing_since: row.failing_since?.toISOString() ?? null,
    pending: row.pending,
  };
}

/** An endpoint by id, scoped to `account` when given: another account's is `not_found`. */
export async function findEndpoint(
  db: Kysely<StatusDb>,
  id: string,
  account: string | undefined,
): Promise<WebhookEndpointRow> {
  let q = db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id);
  if (account !== undefined) q = q.where('account_id', '=', account);
  const row = await q.executeTakeFirst();
  if (!row) throw notFound(id);
  return row;
}

export function notFound(id: string): HeraldError {
  return new HeraldError('not_found', `no webhook endpoint ${id} (for this account)`, {
    field: 'id',
  });
}

export async function insertEndpoint(
  db: Kysely<StatusDb>,
  e: { id: string; account: string; url: string; events: readonly WebhookEventType[] },
  sealed: string,
): Promise<WebhookEndpointRow> {
  return db
    .insertInto('webhook_endpoints')
    .values({
      id: e.id,
      account_id: e.account,
      url: e.url,
      // Absent or empty: every type, stored spelled out so a later type is not sent unasked.
      events: e.events.length === 0 ? [...WEBHOOK_EVENT_TYPES] : [...e.events],
      secret_sealed: sealed,
      previous_secret_sealed: null,
      previous_until: null,
      disabled_at: null,
      disabled_reason: null,
      failing_since: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export const newEndpointId = (): string => randomUUID();

export async function listEndpoints(
  db: Kysely<StatusDb>,
  account: string,
): Promise<WebhookEndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', account)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Deletes an endpoint with its messages and attempts (cascade); returns it as it was. */
export async function deleteEndpoint(
  db: Kysely<StatusDb>,
  id: string,
  account: string | undefined,
): Promise<WebhookEndpointRow> {
  let q = db.deleteFrom('webhook_endpoints').where('id', '=', id);
  if (account !== undefined) q = q.where('account_id', '=', account);
  const row = await q.returningAll().executeTakeFirst();
  if (!row) throw notFound(id);
  return row;
}

/** The new sealed secret signs; the one it replaces keeps signing beside it until `until`. */
export async function rotateSecret(
  db: Kysely<StatusDb>,
  row: WebhookEndpointRow,
  sealed: string,
  until: Date,
): Promise<WebhookEndpointRow> {
  return db
    .updateTable('webhook_endpoints')
    .set({
      secret_sealed: sealed,
      previous_secret_sealed: row.secret_sealed,
      previous_until: until,
    })
    .where('id', '=', row.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Enabled again: its waiting messages are sent from now on, its failure clock starts afresh. */
export async function enableEndpoint(
  db: Kysely<StatusDb>,
  id: string,
  account: string | undefined,
): Promise<WebhookEndpointRow> {
  let q = db
    .updateTable('webhook_endpoints')
    .set({ disabled_at: null, disabled_reason: null, failing_since: null })
    .where('id', '=', id);
  if (account !== undefined) q = q.where('account_id', '=', account);
  const row = await q.returningAll().executeTakeFirst();
  if (!row) throw notFound(id);
  return row;
}

/** The newest `limit` attempts of an endpoint, newest first. */
export async function recentAttempts(
  db: Kysely<StatusDb>,
  endpointId: string,
  limit: number,
): Promise<WebhookAttempt[]> {
  const rows = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('endpoint_id', '=', endpointId)
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    at: r.at.toISOString(),
    message_id: r.msg_id,
    type: r.type,
    http_status: r.http_status,
    error: r.error,
    latency_ms: r.latency_ms,
  }));
}

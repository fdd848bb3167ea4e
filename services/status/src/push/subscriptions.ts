import { createHash, randomUUID } from 'node:crypto';
import { HeraldError, type PushKind, type PushSubscriptionView } from '@herald/proto';
import { type Kysely, sql } from 'kysely';
import type { PushSubscriptionRow, StatusDb } from '../db-schema.js';

export function subscriptionView(row: PushSubscriptionRow): PushSubscriptionView {
  return {
    id: row.id,
    account_id: row.account_id,
    key_id: row.key_id,
    recipient: row.recipient,
    kind: row.kind as PushSubscriptionView['kind'],
    device: row.device,
    // The path is a bearer capability: anyone holding it may push to the browser's service. A
    // device token is never shown either.
    endpoint_origin: row.kind === 'webpush' ? originOf(row.endpoint) : null,
    created_at: row.created_at.toISOString(),
    last_success_at: row.last_success_at?.toISOString() ?? null,
  };
}

function originOf(endpoint: string): string | null {
  try {
    return new URL(endpoint).origin;
  } catch {
    return null;
  }
}

export interface NewSubscription {
  account: string;
  keyId: string;
  recipient: string;
  device: string | undefined;
  kind: PushKind;
  /** Web Push: the endpoint URL; FCM and APNs: `kind:token`. */
  endpoint: string;
  /** Web Push only. */
  keys: { p256dh: string; auth: string } | undefined;
}

/** Per recipient: registrations of one recipient are made one at a time (the cap's count). */
const lockKey = (account: string, recipient: string) =>
  createHash('sha256').update(`push:${account}:${recipient}`).digest().readBigInt64BE(0);

/**
 * Registers a subscription (a device token is an endpoint `kind:token`). Idempotent per (account, endpoint): the same endpoint again answers
 * its id with `created` false, its keys, key, recipient and device brought up to date (a browser
 * that signed in as someone else moves its subscription with it). At `cap` subscriptions the
 * recipient's oldest are deleted to make room: a new browser or phone is never refused, and the
 * one replaced is most likely the one no longer used.
 */
export async function subscribe(
  db: Kysely<StatusDb>,
  s: NewSubscription,
  cap: number,
): Promise<{ id: string; created: boolean; replaced: string[] }> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${lockKey(s.account, s.recipient)})`.execute(trx);
    const fields = {
      key_id: s.keyId,
      recipient: s.recipient,
      device: s.device ?? null,
      p256dh: s.keys?.p256dh ?? null,
      auth: s.keys?.auth ?? null,
    };
    const same = await trx
      .updateTable('push_subscriptions')
      .set(fields)
      .where('account_id', '=', s.account)
      .where('endpoint', '=', s.endpoint)
      .returning('id')
      .executeTakeFirst();
    if (same) return { id: same.id, created: false, replaced: [] };
    const mine = await trx
      .selectFrom('push_subscriptions')
      .select('id')
      .where('account_id', '=', s.account)
      .where('recipient', '=', s.recipient)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    const replaced = mine.slice(0, Math.max(0, mine.length - cap + 1)).map((r) => r.id);
    if (replaced.length > 0)
      await trx.deleteFrom('push_subscriptions').where('id', 'in', replaced).execute();
    const id = `ps_${randomUUID().replaceAll('-', '')}`;
    await trx
      .insertInto('push_subscriptions')
      .values({
        id,
        account_id: s.account,
        kind: s.kind,
        endpoint: s.endpoint,
        ...fields,
      })
      // A registration of the same endpoint that committed meanwhile (another recipient's lock).
      .onConflict((oc) => oc.columns(['account_id', 'endpoint']).doUpdateSet(fields))
      .execute();
    const row = await trx
      .selectFrom('push_subscriptions')
      .select('id')
      .where('account_id', '=', s.account)
      .where('endpoint', '=', s.endpoint)
      .executeTakeFirstOrThrow();
    return { id: row.id, created: row.id === id, replaced };
  });
}

/** Deletes a subscription of `account` (and of `recipient`, when given); another's is not_found. */
export async function unsubscribe(
  db: Kysely<StatusDb>,
  account: string,
  id: string,
  recipient: string | undefined,
): Promise<PushSubscriptionRow> {
  let q = db
    .deleteFrom('push_subscriptions')
    .where('id', '=', id)
    .where('account_id', '=', account);
  if (recipient !== undefined) q = q.where('recipient', '=', recipient);
  const row = await q.returningAll().executeTakeFirst();
  if (!row) throw notFound(id);
  return row;
}

export async function findSubscription(
  db: Kysely<StatusDb>,
  account: string,
  id: string,
): Promise<PushSubscriptionRow> {
  const row = await db
    .selectFrom('push_subscriptions')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', account)
    .executeTakeFirst();
  if (!row) throw notFound(id);
  return row;
}

/** The account's subscriptions (one recipient's when given), oldest first; at most `limit`. */
export async function listSubscriptions(
  db: Kysely<StatusDb>,
  account: string,
  recipient: string | undefined,
  limit: number,
): Promise<PushSubscriptionRow[]> {
  let q = db.selectFrom('push_subscriptions').selectAll().where('account_id', '=', account);
  if (recipient !== undefined) q = q.where('recipient', '=', recipient);
  return q.orderBy('created_at').orderBy('id').limit(limit).execute();
}

function notFound(id: string): HeraldError {
  return new HeraldError('not_found', `no push subscription ${id} (for this account)`, {
    field: 'id',
  });
}

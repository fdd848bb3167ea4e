import type { RefusalBatch, RefusalView } from '@herald/proto';
import { type Kysely, sql } from 'kysely';
import type { StatusDb } from '../db-schema.js';

/** The refusal store's bounds (REFUSALS_PER_KEY, REFUSAL_MERGE_MS). */
export interface RefusalStoreLimits {
  perKey: number;
  mergeMs: number;
}

const INT_MAX = 2_147_483_647;

/**
 * Writes one key's interval of refusals in one transaction: each record merges into the last
 * stored row of its kind when that row's last time is within `mergeMs` of the record's first
 * (a steady flood stays one row with a count), else is a new row; then the key's rows beyond
 * `perKey`, oldest first, are deleted. The account is the batch's, checked against its subject.
 */
export async function writeRefusals(
  db: Kysely<StatusDb>,
  batch: RefusalBatch,
  limits: RefusalStoreLimits,
): Promise<void> {
  const { account_id: account, key_id: key } = batch;
  await db.transaction().execute(async (tx) => {
    for (const r of batch.records) {
      const field = r.field ?? '';
      const origin = r.origin ?? '';
      const merged =
        limits.mergeMs > 0
          ? await tx
              .updateTable('key_refusals')
              .set({
                count: sql`least(count + ${r.count}, ${INT_MAX})`,
                last_at: sql`greatest(last_at, ${new Date(r.last_at)})`,
              })
              .where(
                'id',
                '=',
                tx
                  .selectFrom('key_refusals')
                  .select('id')
                  .where('account_id', '=', account)
                  .where('key_id', '=', key)
                  .where('status', '=', r.status)
                  .where('code', '=', r.code)
                  .where('field', '=', field)
                  .where('origin', '=', origin)
                  .where('route', '=', r.route)
                  .where('last_at', '>=', new Date(r.first_at - limits.mergeMs))
                  .orderBy('last_at', 'desc')
                  .limit(1),
              )
              .executeTakeFirst()
          : undefined;
      if (merged !== undefined && merged.numUpdatedRows > 0n) continue;
      await tx
        .insertInto('key_refusals')
        .values({
          account_id: account,
          key_id: key,
          status: r.status,
          code: r.code,
          field,
          origin,
          route: r.route,
          count: Math.min(r.count, INT_MAX),
          first_at: new Date(r.first_at),
          last_at: new Date(r.last_at),
        })
        .execute();
    }
    await tx
      .deleteFrom('key_refusals')
      .where('account_id', '=', account)
      .where('key_id', '=', key)
      .where(
        'id',
        'not in',
        tx
          .selectFrom('key_refusals')
          .select('id')
          .where('account_id', '=', account)
          .where('key_id', '=', key)
          .orderBy('last_at', 'desc')
          .orderBy('id', 'desc')
          .limit(limits.perKey),
      )
      .execute();
  });
}

/** One key's refusals, newest first: only the account's own (another account's key reads none). */
export async function keyRefusals(
  db: Kysely<StatusDb>,
  account: string,
  key: string,
  limit: number,
): Promise<RefusalView[]> {
  const rows = await db
    .selectFrom('key_refusals')
    .select(['status', 'code', 'field', 'origin', 'route', 'count', 'first_at', 'last_at'])
    .where('account_id', '=', account)
    .where('key_id', '=', key)
    .orderBy('last_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    status: r.status,
    code: r.code,
    field: r.field === '' ? null : r.field,
    origin: r.origin === '' ? null : r.origin,
    route: r.route,
    count: r.count,
    first_at: r.first_at.toISOString(),
    last_at: r.last_at.toISOString(),
  }));
}

import {
  type EventStatusView,
  STATUS_WINDOWS,
  type StatusCounts,
  type StatusWindow,
} from '@herald/proto';
import { type Kysely, sql } from 'kysely';
import { STATUS_EVENT_COLUMNS, type StatusDb, type StatusEventRow } from './db-schema.js';
import { currentStatus } from './merge.js';
import { topicStatus, topicViews } from './topics/fanouts.js';

/** Every query filters on the account first: no answer ever crosses accounts. */

/** The push columns /events/status adds to a row (migration 0005). */
interface Pushed {
  pushed_at: Date | null;
  pushed_count: number | null;
}

export function viewOf(row: StatusEventRow & Partial<Pushed>): EventStatusView {
  return {
    id: row.id,
    status: currentStatus(row),
    key_id: row.key_id === '' ? null : row.key_id,
    recipient: row.recipient,
    sent_at: iso(row.sent_at),
    queued_at: iso(row.queued_at),
    delivered_at: iso(row.delivered_at),
    failed_at: iso(row.failed_at),
    reason: row.reason,
    ...(row.pushed_at !== undefined
      ? {
          pushed:
            row.pushed_at === null
              ? null
              : { at: row.pushed_at.toISOString(), subscriptions: row.pushed_count ?? 0 },
        }
      : {}),
  };
}

/** Each id's status, in the order asked; `unknown` for an id of another account or none. */
export async function statusOfIds(
  db: Kysely<StatusDb>,
  account: string,
  ids: readonly string[],
): Promise<EventStatusView[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('status_events')
    .select(STATUS_EVENT_COLUMNS)
    .select(['pushed_at', 'pushed_count'])
    .where('account_id', '=', account)
    .where('id', 'in', [...new Set(ids)])
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  const missing = ids.filter((id) => !byId.has(id));
  // A topic event has no row of its own: its copies have, and its status counts them.
  const topics = await topicViews(db, account, missing);
  return ids.map((id) => {
    const row = byId.get(id);
    if (row) return viewOf(row);
    const topic = topics.get(id);
    return topic ? { id, status: topicStatus(topic), topic } : { id, status: 'unknown' };
  });
}

export interface CountsAnswer {
  counts: StatusCounts;
  series: Array<StatusCounts & { t: string }>;
}

/** Transitions per status over the window, and the same per bucket for the chart. */
export async function countsOver(
  db: Kysely<StatusDb>,
  account: string,
  keyId: string | undefined,
  window: StatusWindow,
  until: number,
): Promise<CountsAnswer> {
  const { spanMs, bucketMs } = STATUS_WINDOWS[window];
  const end = Math.ceil(until / bucketMs) * bucketMs;
  const start = end - spanMs;
  const bucketS = bucketMs / 1000;
  let q = db
    .selectFrom('status_rollup')
    .select([
      'status',
      sql<string>`floor(extract(epoch from minute) / ${bucketS}) * ${bucketS}`.as('bucket'),
      sql<string>`sum(count)`.as('n'),
    ])
    .where('account_id', '=', account)
    .where('minute', '>=', new Date(start))
    .where('minute', '<', new Date(end));
  if (keyId !== undefined) q = q.where('key_id', '=', keyId);
  const rows = await q.groupBy(['status', 'bucket']).execute();
  const counts: StatusCounts = { sent: 0, pending: 0, delivered: 0, failed: 0 };
  const buckets = new Map<number, StatusCounts>();
  for (let t = start; t < end; t += bucketMs)
    buckets.set(t, { sent: 0, pending: 0, delivered: 0, failed: 0 });
  for (const r of rows) {
    const n = Number(r.n);
    counts[r.status] += n;
    const b = buckets.get(Number(r.bucket) * 1000);
    if (b) b[r.status] += n;
  }
  return {
    counts,
    series: [...buckets].map(([t, c]) => ({ t: new Date(t).toISOString(), ...c })),
  };
}

export interface RecentFilter {
  keyId?: string | undefined;
  id?: string | undefined;
  recipient?: string | undefined;
  limit: number;
}

/** The newest events, optionally one id or one recipient's. */
export async function recentEvents(
  db: Kysely<StatusDb>,
  account: string,
  filter: RecentFilter,
): Promise<EventStatusView[]> {
  let q = db
    .selectFrom('status_events')
    .select(STATUS_EVENT_COLUMNS)
    .select(['pushed_at', 'pushed_count'])
    .where('account_id', '=', account);
  if (filter.keyId !== undefined) q = q.where('key_id', '=', filter.keyId);
  if (filter.id !== undefined) q = q.where('id', '=', filter.id);
  if (filter.recipient !== undefined) q = q.where('recipient', '=', filter.recipient.toLowerCase());
  const rows = await q.orderBy('created_at', 'desc').orderBy('id').limit(filter.limit).execute();
  return rows.map(viewOf);
}

/** Each key's latest dispatch (sent, pending or failed), from the rollup. */
export async function lastUsed(
  db: Kysely<StatusDb>,
  account: string,
): Promise<Record<string, string>> {
  const rows = await db
    .selectFrom('status_rollup')
    .select(['key_id', sql<Date>`max(last_at)`.as('last')])
    .where('account_id', '=', account)
    .where('status', '!=', 'delivered')
    .where('key_id', '!=', '')
    .groupBy('key_id')
    .execute();
  return Object.fromEntries(rows.map((r) => [r.key_id, new Date(r.last).toISOString()]));
}

function iso(d: Date | null): string | null {
  return d === null ? null : d.toISOString();
}

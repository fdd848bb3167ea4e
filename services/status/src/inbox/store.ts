import { type Kysely, sql } from 'kysely';
import type { StatusDb } from '../db-schema.js';

/** One event to keep, its account taken from the subject it came on. */
export interface StoreItem {
  account: string;
  recipient: string;
  id: string;
  ts: number;
  payloadJson: string;
  /** A topic event's copy (issue 44): its topic. */
  topic?: string | undefined;
  expiresAt: Date;
}

/** Each item's outcome, in order: its sequence (a retried event: its first one's), or full. */
export type StoreOutcome = { seq: number } | { full: true };

export interface StoreResult {
  outcomes: StoreOutcome[];
  /** The recipients that gained an event (their unread count changed), as account and recipient. */
  changed: Array<{ account: string; recipient: string }>;
}

const pairKey = (account: string, recipient: string) => `${account}\u0000${recipient}`;
const eventKey = (account: string, id: string, recipient: string) =>
  `${account}\u0000${id}\u0000${recipient}`;

/**
 * Keeps a batch of events (from any number of concurrent store requests) in one transaction and
 * a fixed number of statements, whatever its size: lock the batch's recipients, find the events
 * already kept (a retry answers the first one's sequence), count each recipient's events, remove
 * the oldest read ones that make room past `cap`, insert the rest in one statement.
 *
 * Each recipient is locked (a transaction-scoped advisory lock, taken in one sorted order so two
 * stores never deadlock) for the whole transaction: its events get their sequences and commit in
 * that order, so a catch-up that read up to sequence N never misses one below N committed later,
 * and two stores never both take the last free place.
 */
export async function storeEvents(
  db: Kysely<StatusDb>,
  items: readonly StoreItem[],
  cap: number,
): Promise<StoreResult> {
  const pairs = new Map<string, { account: string; recipient: string }>();
  for (const it of items) pairs.set(pairKey(it.account, it.recipient), it);
  const pairList = [...pairs.values()];
  const pa = pairList.map((p) => p.account);
  const pr = pairList.map((p) => p.recipient);
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(k) from (
        select hashtextextended(x, 32) as k from unnest(${pairList.map((p) => `${p.account} ${p.recipient}`)}::text[]) as x order by 1
      ) s`.execute(trx);
    const existing = await sql<{ account_id: string; id: string; recipient: string; seq: string }>`
      select account_id, id, recipient, seq from inbox_events
      where (account_id, id, recipient) in (
        select * from unnest(${items.map((i) => i.account)}::text[], ${items.map((i) => i.id)}::text[],
          ${items.map((i) => i.recipient)}::text[]))`.execute(trx);
    const seqOf = new Map<string, number>();
    for (const r of existing.rows)
      seqOf.set(eventKey(r.account_id, r.id, r.recipient), Number(r.seq));
    const counts = await sql<{
      account_id: string;
      recipient: string;
      total: number;
      read: number;
    }>`
      select account_id, recipient, count(*)::int as total,
        count(*) filter (where read_at is not null)::int as read
      from inbox_events
      where (account_id, recipient) in (select * from unnest(${pa}::text[], ${pr}::text[]))
      group by account_id, recipient`.execute(trx);
    const room = new Map<string, { total: number; read: number; evict: number }>();
    for (const p of pairs.keys()) room.set(p, { total: 0, read: 0, evict: 0 });
    for (const c of counts.rows) {
      const r = room.get(pairKey(c.account_id, c.recipient));
      if (r) Object.assign(r, { total: c.total, read: c.read });
    }
    // Plan in order: a retry takes its first copy; a new event takes a free place, else the
    // place of the recipient's oldest read event, else it is refused (nothing is dropped).
    const plan: Array<'insert' | 'dup' | 'full'> = [];
    const fresh: StoreItem[] = [];
    const planned = new Set<string>();
    for (const it of items) {
      const ek = eventKey(it.account, it.id, it.recipient);
      if (seqOf.has(ek) || planned.has(ek)) {
        plan.push('dup');
        continue;
      }
      const r = room.get(pairKey(it.account, it.recipient));
      if (!r) throw new Error('inbox store: a recipient outside its batch');
      if (r.total < cap) r.total++;
      else if (r.read > 0) {
        r.read--;
        r.evict++;
      } else {
        plan.push('full');
        continue;
      }
      planned.add(ek);
      fresh.push(it);
      plan.push('insert');
    }
    const evicting = [...room.entries()].filter(([, r]) => r.evict > 0);
    if (evicting.length > 0) {
      const ev = evicting.map(([k, r]) => ({
        ...(pairs.get(k) as { account: string; recipient: string }),
        n: r.evict,
      }));
      await sql`delete from inbox_events where seq in (
          select e.seq from unnest(${ev.map((e) => e.account)}::text[], ${ev.map((e) => e.recipient)}::text[],
            ${ev.map((e) => e.n)}::int[]) as v(a, r, n)
          cross join lateral (
            select seq from inbox_events
            where account_id = v.a and recipient = v.r and read_at is not null
            order by seq limit v.n) e)`.execute(trx);
    }
    if (fresh.length > 0) {
      const inserted = await sql<{
        account_id: string;
        id: string;
        recipient: string;
        seq: string;
      }>`
        insert into inbox_events (account_id, recipient, id, ts, payload_json, expires_at, topic)
        select a, r, i, t, p, e, tp from unnest(${fresh.map((i) => i.account)}::text[],
          ${fresh.map((i) => i.recipient)}::text[], ${fresh.map((i) => i.id)}::text[],
          ${fresh.map((i) => String(i.ts))}::bigint[], ${fresh.map((i) => i.payloadJson)}::text[],
          ${fresh.map((i) => i.expiresAt.toISOString())}::timestamptz[],
          ${fresh.map((i) => i.topic ?? null)}::text[])
          with ordinality as u(a, r, i, t, p, e, tp, n)
        order by n
        returning account_id, id, recipient, seq`.execute(trx);
      for (const r of inserted.rows)
        seqOf.set(eventKey(r.account_id, r.id, r.recipient), Number(r.seq));
    }
    const outcomes: StoreOutcome[] = items.map((it, i) => {
      if (plan[i] === 'full') return { full: true };
      const seq = seqOf.get(eventKey(it.account, it.id, it.recipient));
      if (seq === undefined) throw new Error('inbox store: an event without its sequence');
      return { seq };
    });
    const changed = new Map<string, { account: string; recipient: string }>();
    for (const it of fresh) changed.set(pairKey(it.account, it.recipient), it);
    return {
      outcomes,
      changed: [...changed.values()].map((c) => ({ account: c.account, recipient: c.recipient })),
    };
  });
}

import { PushSpec } from '@herald/proto';
import { type Kysely, sql } from 'kysely';
import type { StatusDb } from '../db-schema.js';
import type { CoveredEvent } from './message.js';

/** A recipient's due events, claimed together: one push covers them. */
export interface ClaimedGroup {
  account: string;
  recipient: string;
  events: Array<CoveredEvent & { expiresAt: Date; dueAt: Date }>;
  /** The most attempts among them, this one included: where the retry schedule stands. */
  attempts: number;
}

/** Claims are made one at a time across every sender (a transaction-scoped advisory lock). */
const CLAIM_LOCK = 0x70757368; // "push"

export interface ClaimOptions {
  worker: string;
  /** Most rows one claim takes (whole recipients; the first recipient always whole). */
  max: number;
  leaseMs: number;
  /** A recipient is claimed this long after its first row fell due (its next ones join). */
  coalesceMs: number;
}

/**
 * Claims whole recipients: those whose earliest due row fell due at least coalesceMs ago and of
 * which no sender holds a live lease, with every row of theirs due by now. The rows are leased to
 * this worker (leased_until, leased_by; attempts counted), taken SKIP LOCKED so a writer's
 * transaction never waits on a claim nor a claim on a writer. Events proved meanwhile (a proof
 * the writer could not delete because a sender held the row) are deleted first: never pushed.
 */
export async function claimGroups(
  db: Kysely<StatusDb>,
  opts: ClaimOptions,
): Promise<ClaimedGroup[]> {
  if (opts.max <= 0) return [];
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${CLAIM_LOCK})`.execute(trx);
    await sql`delete from push_due d using status_events s
      where s.id = d.event_id and s.account_id = d.account_id and d.due_at <= now()
        and (d.leased_until is null or d.leased_until <= now())
        and (s.delivered_at is not null or s.sent_at is not null)`.execute(trx);
    const lease = sql`now() + ${`${opts.leaseMs} milliseconds`}::interval`;
    const coalesce = sql`${`${opts.coalesceMs} milliseconds`}::interval`;
    const r = await sql<{
      event_id: string;
      account_id: string;
      recipient: string;
      at: Date;
      due_at: Date;
      expires_at: Date;
      spec: unknown;
      attempts: number;
    }>`
      with groups as (
        select account_id, recipient from push_due g
        where due_at <= now()
        group by account_id, recipient
        having min(due_at) <= now() - ${coalesce}
          and not bool_or(leased_until is not null and leased_until > now())
        order by min(due_at)
        limit ${opts.max}
      ), picked as (
        select d.event_id from push_due d join groups using (account_id, recipient)
        where d.due_at <= now()
        order by d.due_at
        limit ${opts.max}
        for update of d skip locked
      )
      update push_due p
      set leased_until = ${lease}, leased_by = ${opts.worker}, attempts = p.attempts + 1
      from picked where p.event_id = picked.event_id
      returning p.event_id, p.account_id, p.recipient, p.at, p.due_at, p.expires_at, p.spec,
        p.attempts`.execute(trx);
    const groups = new Map<string, ClaimedGroup>();
    for (const row of r.rows) {
      const spec = PushSpec.safeParse(row.spec);
      if (!spec.success) continue;
      const k = `${row.account_id}\u0000${row.recipient}`;
      const g = groups.get(k) ?? {
        account: row.account_id,
        recipient: row.recipient,
        events: [],
        attempts: 0,
      };
      g.events.push({
        id: row.event_id,
        at: row.at,
        spec: spec.data,
        expiresAt: row.expires_at,
        dueAt: row.due_at,
      });
      g.attempts = Math.max(g.attempts, row.attempts);
      groups.set(k, g);
    }
    return [...groups.values()];
  });
}

/** Events waiting for their push or its retry: the gauge. */
export async function dueCount(db: Kysely<StatusDb>): Promise<number> {
  const r = await sql<{ n: number }>`select count(*)::int as n from push_due`.execute(db);
  return r.rows[0]?.n ?? 0;
}

/** The earliest due time, so a restarted (or idle) sender arms its timer for it. */
export async function nextDue(db: Kysely<StatusDb>): Promise<Date | undefined> {
  const r = await sql<{ at: Date | null }>`select min(due_at) as at from push_due
    where leased_until is null or leased_until <= now()`.execute(db);
  return r.rows[0]?.at ?? undefined;
}

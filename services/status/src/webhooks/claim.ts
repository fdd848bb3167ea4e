import { type Kysely, sql } from 'kysely';
import type { StatusDb } from '../db-schema.js';

/** A message a worker holds until its lease ends, with what sending it needs. */
export interface ClaimedMessage {
  seq: string;
  endpoint_id: string;
  msg_id: string;
  type: string;
  body: string;
  transition_at: Date;
  /** Attempts including this one. */
  attempts: number;
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_until: Date | null;
}

/** Claims are made one at a time across every worker (a transaction-scoped advisory lock). */
const CLAIM_LOCK = 0x68657261; // "hera"

export interface ClaimLimits {
  /** This sender's id: its leases are its own, another's keep it off their endpoint. */
  worker: string;
  /** Most messages this claim takes, over every endpoint. */
  max: number;
  /** Most leases held per endpoint that is failing (WEBHOOK_ENDPOINT_CONCURRENCY). */
  perEndpoint: number;
  /** Most leases held per endpoint that is not (WEBHOOK_ENDPOINT_PREFETCH, at least perEndpoint). */
  prefetch: number;
  leaseMs: number;
}

/**
 * Claims due messages for this worker, spread over the endpoints in random order so one
 * endpoint's backlog never takes every slot: for an endpoint no other worker holds a lease of, up
 * to `prefetch` leases (`perEndpoint` while it is failing) counting those it already holds; for
 * one another worker holds, none, so one worker at a time sends to an endpoint and its own cap
 * on requests in flight is the endpoint's. A claim moves the message's due time to the lease's
 * end: if this worker dies, it becomes due again then. Claims are serialized (a short
 * transaction) so two workers never both see an endpoint free; the rows themselves are taken
 * SKIP LOCKED, never waiting on a writer or a completion.
 */
export async function claimDue(
  db: Kysely<StatusDb>,
  limits: ClaimLimits,
): Promise<ClaimedMessage[]> {
  const { worker, max, perEndpoint, leaseMs } = limits;
  if (max <= 0) return [];
  const prefetch = Math.max(limits.prefetch, perEndpoint);
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${CLAIM_LOCK})`.execute(trx);
    const lease = sql`now() + ${`${leaseMs} milliseconds`}::interval`;
    const r = await sql<ClaimedMessage>`
      with eps as (
        select e.id, e.url, e.secret_sealed, e.previous_secret_sealed, e.previous_until,
          case when exists (select 1 from webhook_messages o where o.endpoint_id = e.id
              and o.leased_until > now() and o.leased_by is distinct from ${worker}) then 0
            else (case when e.failing_since is null then ${prefetch}::int else ${perEndpoint}::int end)
              - (select count(*)::int from webhook_messages l where l.endpoint_id = e.id
                and l.leased_until > now() and l.leased_by = ${worker}) end as free
        from webhook_endpoints e
        where e.disabled_at is null and e.pending > 0
        order by random()
      ), picked as (
        select m.seq, eps.id as endpoint_id from eps cross join lateral (
          select seq from webhook_messages m
          where m.endpoint_id = eps.id and m.failed_at is null and m.next_at <= now()
          order by m.next_at
          limit greatest(eps.free, 0)
          for update skip locked) m
        limit ${max}
      )
      update webhook_messages m
      set next_at = ${lease}, leased_until = ${lease}, leased_by = ${worker},
        attempts = m.attempts + 1
      from picked join eps on eps.id = picked.endpoint_id
      where m.seq = picked.seq
      returning m.seq, m.endpoint_id, m.msg_id, m.type, m.body, m.transition_at, m.attempts,
        eps.url, eps.secret_sealed, eps.previous_secret_sealed, eps.previous_until`.execute(trx);
    return r.rows;
  });
}

/** Messages waiting (not failed) over every endpoint: the queue depth gauge. */
export async function queueDepth(db: Kysely<StatusDb>): Promise<number> {
  const r = await sql<{ n: number }>`
    select coalesce(sum(pending), 0)::int as n from webhook_endpoints`.execute(db);
  return r.rows[0]?.n ?? 0;
}

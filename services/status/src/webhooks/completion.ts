import { type Kysely, sql } from 'kysely';
import type { StatusDb } from '../db-schema.js';

/** What became of one claimed message. */
export type Outcome =
  /** A 2xx: the message is deleted. */
  | { kind: 'success' }
  /** Tried again after `waitMs`. */
  | { kind: 'retry'; waitMs: number }
  /** The schedule is exhausted: the message is kept, failed. */
  | { kind: 'exhausted' }
  /** Not attempted after all (shutdown): due again at once, the attempt not counted. */
  | { kind: 'release' };

export interface AttemptRecord {
  at: Date;
  httpStatus: number | null;
  error: string | null;
  latencyMs: number;
  /** The endpoint answered 410 Gone: it is disabled at once. */
  gone: boolean;
}

export interface Completed {
  seq: string;
  endpointId: string;
  msgId: string;
  type: string;
  outcome: Outcome;
  /** Absent for a release. */
  attempt?: AttemptRecord;
}

export interface CompletionOptions {
  disableAfterMs: number;
}

export interface Disabled {
  id: string;
  account: string;
  reason: string;
}

/**
 * Records a set of completed messages in one transaction: the endpoints' rows first (locked in id
 * order, like every writer of their `pending`), then the messages, the attempts, the endpoints'
 * counts and failure state (the attempts log is trimmed apart: {@link trimAttempts}). A message
 * another worker already finished (its lease had run out) changes no count. Returns the endpoints
 * this disabled (410 Gone, or failing without a success for `disableAfterMs`).
 */
export async function recordCompleted(
  db: Kysely<StatusDb>,
  done: readonly Completed[],
  opts: CompletionOptions,
): Promise<{ disabled: Disabled[]; exhausted: number }> {
  if (done.length === 0) return { disabled: [], exhausted: 0 };
  const ids = [...new Set(done.map((d) => d.endpointId))].sort();
  return db.transaction().execute(async (trx) => {
    const endpoints = await trx
      .selectFrom('webhook_endpoints')
      .select(['id', 'account_id', 'disabled_at', 'failing_since'])
      .where('id', 'in', ids)
      .orderBy('id')
      .forUpdate()
      .execute();
    const seqs = (kind: Outcome['kind']) =>
      done.filter((d) => d.outcome.kind === kind).map((d) => d.seq);
    const finished = new Map<string, number>();
    const count = (rows: { endpoint_id: string }[]) => {
      for (const r of rows) finished.set(r.endpoint_id, (finished.get(r.endpoint_id) ?? 0) + 1);
    };
    const ok = seqs('success');
    if (ok.length > 0) {
      count(
        (
          await sql<{ endpoint_id: string }>`delete from webhook_messages
            where seq = any(${ok}::bigint[]) returning endpoint_id`.execute(trx)
        ).rows,
      );
    }
    const exhausted = seqs('exhausted');
    let failedNow = 0;
    if (exhausted.length > 0) {
      const rows = (
        await sql<{ endpoint_id: string }>`update webhook_messages
          set failed_at = now(), leased_until = null
          where seq = any(${exhausted}::bigint[]) and failed_at is null returning endpoint_id`.execute(
          trx,
        )
      ).rows;
      failedNow = rows.length;
      count(rows);
    }
    const later = done.flatMap((d) =>
      d.outcome.kind === 'retry' || d.outcome.kind === 'release'
        ? [
            {
              seq: d.seq,
              wait: d.outcome.kind === 'retry' ? d.outcome.waitMs : 0,
              undo: d.outcome.kind === 'release' ? 1 : 0,
            },
          ]
        : [],
    );
    if (later.length > 0) {
      await sql`update webhook_messages m
        set next_at = now() + v.wait * interval '1 millisecond', leased_until = null,
          attempts = m.attempts - v.undo
        from unnest(${later.map((l) => l.seq)}::bigint[], ${later.map((l) => l.wait)}::bigint[],
          ${later.map((l) => l.undo)}::int[]) as v(seq, wait, undo)
        where m.seq = v.seq and m.failed_at is null`.execute(trx);
    }
    const attempts = done.flatMap((d) => (d.attempt ? [{ ...d.attempt, d }] : []));
    if (attempts.length > 0) {
      await sql`insert into webhook_attempts (endpoint_id, at, msg_id, type, http_status, error, latency_ms)
        select * from unnest(${attempts.map((a) => a.d.endpointId)}::text[],
          ${attempts.map((a) => a.at.toISOString())}::timestamptz[], ${attempts.map((a) => a.d.msgId)}::text[],
          ${attempts.map((a) => a.d.type)}::text[], ${attempts.map((a) => a.httpStatus)}::int[],
          ${attempts.map((a) => a.error)}::text[], ${attempts.map((a) => a.latencyMs)}::int[])`.execute(
        trx,
      );
    }
    const disabled: Disabled[] = [];
    const now = Date.now();
    for (const e of endpoints) {
      let failing = e.failing_since;
      let reason: string | null = null;
      for (const d of done) {
        if (d.endpointId !== e.id || !d.attempt) continue;
        if (d.outcome.kind === 'success') failing = null;
        else failing ??= d.attempt.at;
        if (d.attempt.gone) reason ??= 'the endpoint answered 410 Gone';
      }
      if (reason === null && failing !== null && now - failing.getTime() >= opts.disableAfterMs) {
        reason = `failing without a success since ${failing.toISOString()} (WEBHOOK_DISABLE_AFTER_MS)`;
      }
      const disable = e.disabled_at === null && reason !== null;
      if (disable) disabled.push({ id: e.id, account: e.account_id, reason: reason as string });
      await trx
        .updateTable('webhook_endpoints')
        .set((eb) => ({
          pending: eb('pending', '-', finished.get(e.id) ?? 0),
          failing_since: failing,
          ...(disable ? { disabled_at: new Date(now), disabled_reason: reason } : {}),
        }))
        .where('id', '=', e.id)
        .execute();
    }
    return { disabled, exhausted: failedNow };
  });
}

/**
 * Deletes each endpoint's attempts beyond its newest `kept` (WEBHOOK_ATTEMPTS_KEPT). The sender
 * calls it every few seconds for the endpoints it attempted meanwhile, not per batch of results:
 * finding an endpoint's cut walks `kept` index entries, which per batch cost as much as the rest
 * of recording it.
 */
export async function trimAttempts(
  db: Kysely<StatusDb>,
  endpointIds: readonly string[],
  kept: number,
): Promise<void> {
  if (endpointIds.length === 0) return;
  await sql`delete from webhook_attempts a using (
      select e.id, (select seq from webhook_attempts x where x.endpoint_id = e.id
        order by seq desc offset ${kept} limit 1) as cut
      from unnest(${[...endpointIds]}::text[]) as e(id)) c
    where a.endpoint_id = c.id and a.seq <= c.cut`.execute(db);
}

import { createHash, randomUUID } from 'node:crypto';
import type { Logger } from '@herald/kit';
import { BatchItemResult, DispatchStatus, HeraldError } from '@herald/proto';
import { z } from 'zod';
import type { IdempotencyStore } from '../idempotency.js';
import { claimOrRefuse, dispatchOwned } from '../idempotency-claim.js';
import { httpStatus, type Outcome, outcomeOfHttp, toHttp } from '../outcome.js';

/** The event id and JetStream dedup id of each event of a batch, by its index. */
export interface BatchIds {
  id(index: number): string;
  msgId(index: number): string;
}

/** Delivers a batch's events under the given ids; one outcome per event, in order. */
export type RunBatch = (ids: BatchIds) => Promise<Outcome[]>;

/** What the store remembers of a finished batch: its results. */
const StoredBatch = z.object({ results: z.array(BatchItemResult) });

/**
 * Step 3 of a batch dispatch: an Idempotency-Key covers the whole batch. The first request claims
 * the key and delivers; a retry with the same body gets the same results (same ids); a retry with
 * another body is refused (422 from the store, which keeps the body's SHA-256 as the fingerprint). Each event's id derives from the claim's id and its index, and
 * its dedup id from the key and its index, so an attempt taken over after a crash reuses them.
 * A batch in which some event could neither be pushed nor stored (503) is not remembered: the
 * retry runs again, and JetStream's dedup keeps the events stored the first time from doubling.
 */
export function createIdempotentBatch(store: IdempotencyStore, logger: Logger) {
  return async function batchOnce(
    account: string,
    idempotencyKey: string | undefined,
    body: Uint8Array,
    run: RunBatch,
  ): Promise<Outcome[]> {
    if (idempotencyKey === undefined) {
      const ids: string[] = [];
      const idAt = (index: number) => {
        const id = ids[index] ?? randomUUID();
        ids[index] = id;
        return id;
      };
      return run({ id: idAt, msgId: idAt });
    }
    const fingerprint = createHash('sha256').update(body).digest('hex');
    // A space never occurs in a valid Idempotency-Key, so batch entries never meet single ones.
    const claim = await claimOrRefuse(store, logger, {
      account,
      key: `batch ${idempotencyKey}`,
      fingerprint,
      for: 'batch',
    });
    if (claim.kind === 'replay') return replay(claim.answer.body);
    const batchId = claim.id;
    const results = await dispatchOwned(store, claim, () =>
      run({
        id: (index) => derivedId(batchId, index),
        msgId: (index) => `${account}:${idempotencyKey} ${index}`,
      }),
    );
    try {
      if (results.some((r) => httpStatus(r) >= 500)) {
        await store.abandon(claim);
      } else {
        const stored = { results: results.map(itemOf) };
        await store.finish(claim, { status: 200, body: stored as never });
      }
    } catch (err) {
      logger.warn({ err: String(err) }, 'could not record an idempotent batch result');
    }
    return results;
  };
}

/** An outcome as it sits in a batch answer: the single dispatch's body plus its status. */
export function itemOf(outcome: Outcome): BatchItemResult {
  const answer = toHttp(outcome);
  return { ...answer.body, http_status: answer.status } as BatchItemResult;
}

const SENT = JSON.stringify(DispatchStatus.sent);
const QUEUED = JSON.stringify(DispatchStatus.queued);

/**
 * A taken batch's answer as JSON text, byte for byte `JSON.stringify({ results: results.map(itemOf) })`,
 * with the usual items (200 sent, 202 queued: a status and an id) written directly instead of each
 * copied into a new object and walked by the serializer.
 */
export function batchAnswerJson(
  outcomes: readonly Outcome[],
  /** Members after `results`, as JSON text starting with a comma (the NATS reply's http_status). */
  more = '',
): string {
  let out = '{"results":[';
  for (let i = 0; i < outcomes.length; i++) {
    const outcome = outcomes[i] as Outcome;
    if (i > 0) out += ',';
    out +=
      outcome.kind === 'sent'
        ? `{"status":${SENT},"id":${JSON.stringify(outcome.id)},"http_status":200}`
        : outcome.kind === 'queued'
          ? `{"status":${QUEUED},"id":${JSON.stringify(outcome.id)},"http_status":202}`
          : JSON.stringify(itemOf(outcome));
  }
  return `${out}]${more}}`;
}

function replay(body: unknown): Outcome[] {
  const parsed = StoredBatch.safeParse(body);
  if (!parsed.success) {
    // Not a batch's entry: only a single dispatch could have written it, under another key space.
    throw new HeraldError(
      'idempotency_key_reused',
      'This Idempotency-Key was already used for another request: use a new key for a new batch',
      { field: 'Idempotency-Key' },
    );
  }
  return parsed.data.results.map(({ http_status, ...body }) => outcomeOfHttp(http_status, body));
}

/** A UUID v4-shaped id fixed by the batch's id and the event's index. */
function derivedId(batchId: string, index: number): string {
  const h = createHash('sha256').update(`${batchId}:${index}`).digest();
  h[6] = ((h[6] ?? 0) & 0x0f) | 0x40;
  h[8] = ((h[8] ?? 0) & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

import { randomUUID } from 'node:crypto';
import type { Logger } from '@herald/kit';
import { HeraldError } from '@herald/proto';
import type { IdempotencyStore } from './idempotency.js';
import { type Outcome, outcomeOfHttp, toHttp } from './outcome.js';

/** Delivers an event under an id and a JetStream dedup id. */
export type DeliverUnder = (id: string, msgId: string) => Promise<Outcome>;

/**
 * Step 3 of a dispatch: with an Idempotency-Key, the first request claims it and delivers; a
 * retry gets the first one's result back (or "in progress" while it runs). Without a key, a fresh
 * id serves as both event id and dedup id.
 */
export function createIdempotentDelivery(store: IdempotencyStore, logger: Logger) {
  return async function deliverOnce(
    account: string,
    idempotencyKey: string | undefined,
    /**
     * The request's `fingerprintOf` (a key reused with another request is refused, 422); computed
     * only when there is a key, so a request without one hashes nothing.
     */
    fingerprint: () => string,
    deliver: DeliverUnder,
  ): Promise<Outcome> {
    if (idempotencyKey === undefined) {
      const id = randomUUID();
      return deliver(id, id);
    }
    let claim: Awaited<ReturnType<IdempotencyStore['claim']>>;
    try {
      claim = await store.claim(account, idempotencyKey, randomUUID(), fingerprint());
    } catch (err) {
      // The store's own refusal (idempotency_key_reused) is an answer, not an outage.
      if (err instanceof HeraldError) throw err;
      logger.warn({ err: String(err) }, 'idempotency store unavailable');
      throw new HeraldError(
        'unavailable',
        'The idempotency store is unavailable: retry shortly (the event was neither sent nor stored)',
        { cause: err },
      );
    }
    if (claim.kind === 'replay') return outcomeOfHttp(claim.answer.status, claim.answer.body);
    if (claim.kind === 'busy') {
      throw new HeraldError(
        'idempotency_in_progress',
        'A request with this Idempotency-Key is still being processed: retry after the Retry-After delay to get its result',
        { field: 'Idempotency-Key', retryAfter: 1 },
      );
    }
    let result: Outcome;
    try {
      result = await deliver(claim.id, `${account}:${idempotencyKey}`);
    } catch (err) {
      // A bug mid-dispatch: mark the claim failed so the caller's retry may dispatch again.
      await store.abandon(claim).catch(() => undefined);
      throw err;
    }
    try {
      // Kept in its HTTP form, which every instance (of any release) reads.
      await store.finish(claim, toHttp(result));
    } catch (err) {
      // The dispatch happened; a retry within the window is still caught by JetStream's dedup (queued).
      logger.warn({ err: String(err), id: claim.id }, 'could not record an idempotent result');
    }
    return result;
  };
}

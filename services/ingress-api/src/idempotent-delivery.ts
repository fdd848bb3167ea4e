import { randomUUID } from 'node:crypto';
import type { Logger } from '@herald/kit';
import type { IdempotencyStore } from './idempotency.js';
import { claimOrRefuse, dispatchOwned } from './idempotency-claim.js';
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
    const claim = await claimOrRefuse(store, logger, {
      account,
      key: idempotencyKey,
      fingerprint: fingerprint(),
      for: 'request',
    });
    if (claim.kind === 'replay') return outcomeOfHttp(claim.answer.status, claim.answer.body);
    const result = await dispatchOwned(store, claim, () =>
      deliver(claim.id, `${account}:${idempotencyKey}`),
    );
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

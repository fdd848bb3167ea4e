import { randomUUID } from 'node:crypto';
import type { Logger } from '@herald/kit';
import { HeraldError } from '@herald/proto';
import type { Claim, IdempotencyStore } from './idempotency.js';

/** A claim this call won (it dispatches), or the first call's answer to give back. */
export type Claimed = Exclude<Claim, { kind: 'busy' }>;
type Owner = Extract<Claim, { kind: 'owner' }>;

/** What a claim covers, in the words of its refusals: one event, or a whole batch. */
export type ClaimFor = 'request' | 'batch';

const WORDING = {
  request: {
    nothingDone: 'the event was neither sent nor stored',
    what: 'A request',
    answer: 'its result',
  },
  batch: { nothingDone: 'no event was sent or stored', what: 'A batch', answer: 'its results' },
} as const satisfies Record<ClaimFor, unknown>;

/**
 * Claims an Idempotency-Key before its dispatch, under a fresh event id: the owner's claim, or
 * the first call's answer to replay. Refuses a key another call holds (409
 * `idempotency_in_progress`, Retry-After 1), a key used with another request (the store's 422),
 * and, when the store does not answer, the whole dispatch (503 `unavailable`: nothing was done).
 */
export async function claimOrRefuse(
  store: IdempotencyStore,
  logger: Logger,
  claim: { account: string; key: string; fingerprint: string; for: ClaimFor },
): Promise<Claimed> {
  const words = WORDING[claim.for];
  let claimed: Claim;
  try {
    claimed = await store.claim(claim.account, claim.key, randomUUID(), claim.fingerprint);
  } catch (err) {
    // The store's own refusal (idempotency_key_reused) is an answer, not an outage.
    if (err instanceof HeraldError) throw err;
    logger.warn({ err: String(err) }, 'idempotency store unavailable');
    throw new HeraldError(
      'unavailable',
      `The idempotency store is unavailable: retry shortly (${words.nothingDone})`,
      { cause: err },
    );
  }
  if (claimed.kind === 'busy') {
    throw new HeraldError(
      'idempotency_in_progress',
      `${words.what} with this Idempotency-Key is still being processed: retry after the Retry-After delay to get ${words.answer}`,
      { field: 'Idempotency-Key', retryAfter: 1 },
    );
  }
  return claimed;
}

/**
 * Runs the owner's dispatch. A throw is a bug mid-dispatch: the claim is marked failed, so the
 * caller's retry may dispatch again (with the same event id).
 */
export async function dispatchOwned<T>(
  store: IdempotencyStore,
  claim: Owner,
  dispatch: () => Promise<T>,
): Promise<T> {
  try {
    return await dispatch();
  } catch (err) {
    await store.abandon(claim).catch(() => undefined);
    throw err;
  }
}

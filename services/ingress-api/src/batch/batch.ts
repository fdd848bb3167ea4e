import { authorizeRecipient } from '@herald/access';
import { HeraldError, type VerifiedKey } from '@herald/proto';
import { outcomeOfError } from '../answer.js';
import type { IngressConfig } from '../config.js';
import type { PushedLive } from '../deliver.js';
import { notDelivered, type Outcome } from '../outcome.js';
import type { DispatchInput, Pipeline } from '../pipeline.js';
import { attributeRefusal } from '../refusals/refusal-log.js';
import { type AcceptedEvent, acceptBatch } from './batch-accept.js';
import { createIdempotentBatch } from './batch-idempotency.js';
import { mapBounded } from './bounded.js';
import { createLiveBatch, type LiveBatchItem, type PushLiveBatch } from './live-batch.js';

export type BatchConfig = Pick<
  IngressConfig,
  | 'PAYLOAD_LIMIT_BYTES'
  | 'BATCH_MAX_EVENTS'
  | 'BATCH_CONCURRENCY'
  | 'BATCH_LIVE'
  | 'LIVE_TIMEOUT_MS'
  | 'LIVE_PROOF_WAIT_MS'
>;

/** A batch: one outcome per event, in order; throws a whole-request refusal. */
export type DispatchBatch = (input: DispatchInput) => Promise<Outcome[]>;

/**
 * The batch dispatch path: the single dispatch's named steps, each run once per batch where it
 * can be (accept scans the body once, one key check, one idempotency claim) and once per event
 * where it must (a rate-limit token, deliver). Up to `concurrency` recipients are delivered to at
 * once, so live pushes and queue publishes overlap; one recipient's events keep the batch's order. Resolves with one result per event, in
 * order; throws the HeraldError of a refused request, as single dispatch does.
 */
export function createBatchDispatch(
  pipeline: Pipeline,
  config: BatchConfig,
  /** nats-server's max_payload: larger live batches are split, since it refuses a message over it. */
  maxMessageBytes: number,
): DispatchBatch {
  const { logger, deliver } = pipeline;
  const limits = {
    payloadLimitBytes: config.PAYLOAD_LIMIT_BYTES,
    maxEvents: config.BATCH_MAX_EVENTS,
    concurrency: config.BATCH_CONCURRENCY,
  };
  const batchOnce = createIdempotentBatch(pipeline.store, logger);
  // The batch's live push in two messages per batch (BATCH_LIVE=grouped); absent, each event's
  // deliver step pushes it live on its own (per_event).
  const pushLiveBatch: PushLiveBatch | undefined =
    config.BATCH_LIVE === 'grouped'
      ? createLiveBatch({
          requester: pipeline.requester,
          timeoutMs: config.LIVE_TIMEOUT_MS,
          proofWaitMs: config.LIVE_PROOF_WAIT_MS,
          maxMessageBytes,
          logger,
        })
      : undefined;

  return async function dispatchBatch(input) {
    const { source } = input;
    // As a single dispatch: a source sending bad keys is refused first, and each 401 counts.
    pipeline.checkSource(source);
    let accepted: ReturnType<typeof acceptBatch>;
    let key: VerifiedKey;
    try {
      accepted = acceptBatch(input, limits);
      pipeline.refuseWhileDown();
      // The key's checks without its rate: tokens are taken per event below.
      key = await pipeline.authorise(accepted.request, input);
    } catch (err) {
      pipeline.countFailure(source, err);
      await pipeline.attributeBadRequest(err, input.body);
      throw err;
    }
    const { events, idempotencyKey } = accepted;
    const account = key.account_id;
    return batchOnce(account, idempotencyKey, input.body, async (ids) => {
      const admitted = await takeTokens(key, events);
      const results: Outcome[] = [];
      // A recipient's events go one after another, so they reach it in the batch's order;
      // different recipients' events overlap.
      const byRecipient = new Map<string, number[]>();
      admitted.forEach((event, index) => {
        const refusal = event.ok ? recipientRefusal(key, event.recipient) : event.error;
        if (refusal !== undefined) {
          results[index] = notDelivered(refusal);
          return;
        }
        if (!event.ok) return;
        const indices = byRecipient.get(event.recipient);
        if (indices) indices.push(index);
        else byRecipient.set(event.recipient, [index]);
      });
      const ts = pipeline.now();
      // Inbox keys: every deliverable event is kept first, in one request (or a few, each under
      // max_payload); a refused one (inbox_full) answers alone and goes no further. A store that
      // does not answer refuses the whole batch (503): nothing was accepted.
      const kept = key.inbox_days
        ? await keepInInbox(pipeline, key, admitted, byRecipient, ids.id, ts, results)
        : false;
      const pushed = pushLiveBatch
        ? await pushLive(pushLiveBatch, account, admitted, byRecipient, ids.id, ts)
        : undefined;
      await mapBounded([...byRecipient.values()], limits.concurrency, async (indices) => {
        for (const index of indices) {
          const event = admitted[index];
          if (!event?.ok) continue;
          const { recipient, payload, push } = event;
          const target = { key, account, recipient, payload, push };
          try {
            const before = pushed?.get(index);
            results[index] = await deliver(
              target,
              ids.id(index),
              ids.msgId(index),
              kept ? { ts, live: before?.live, kept: true } : before,
            );
          } catch (err) {
            results[index] = outcomeOfError(err, logger, { transport: 'batch', index });
          }
        }
      });
      return results;
    });
  };

  /**
   * One rate-limit token per good event, in order. With no token for the first, the batch is
   * refused whole (403 + Retry-After, as a single dispatch); once some were granted, an event
   * past the limit fails alone in its slot.
   */
  async function takeTokens(key: VerifiedKey, events: AcceptedEvent[]): Promise<AcceptedEvent[]> {
    const { rateLimiter } = pipeline;
    if (!rateLimiter) return events;
    const out: AcceptedEvent[] = [];
    let granted = 0;
    for (const event of events) {
      if (!event.ok) {
        out.push(event);
        continue;
      }
      try {
        if (!rateLimiter.takeNow(key)) await rateLimiter.take(key);
        granted++;
        out.push(event);
      } catch (err) {
        // The whole batch refused for its key's rate: a refusal of that key (refusal-log.ts).
        if (granted === 0 || !(err instanceof HeraldError)) throw attributeRefusal(err, key);
        out.push({ ok: false, error: err });
      }
    }
    return out;
  }
}

/**
 * Pushes every deliverable event of the batch live at once (live-batch.ts); by batch index, how
 * each push went, for its deliver step to answer `sent` or queue it.
 */
async function pushLive(
  push: PushLiveBatch,
  account: string,
  admitted: readonly AcceptedEvent[],
  byRecipient: ReadonlyMap<string, readonly number[]>,
  idOf: (index: number) => string,
  ts: number,
): Promise<Map<number, PushedLive>> {
  const { indices, items } = deliverable(admitted, byRecipient, idOf, ts);
  const outcomes = await push(account, items);
  const pushed = new Map<number, PushedLive>();
  indices.forEach((index, at) => {
    const live = outcomes[at];
    if (live) pushed.set(index, { ts, live });
  });
  return pushed;
}

/**
 * Keeps the batch's deliverable events in the inbox store before anything else happens to them;
 * a refused event gets its answer in `results` and leaves `byRecipient`. True once kept.
 */
async function keepInInbox(
  pipeline: Pipeline,
  key: VerifiedKey,
  admitted: readonly AcceptedEvent[],
  byRecipient: Map<string, number[]>,
  idOf: (index: number) => string,
  ts: number,
  results: Outcome[],
): Promise<boolean> {
  const { indices, items } = deliverable(admitted, byRecipient, idOf, ts);
  if (items.length === 0) return true;
  const refusals = await pipeline.inbox.keep(key, items);
  indices.forEach((index, at) => {
    const refusal = refusals[at];
    if (!refusal) return;
    results[index] = notDelivered(refusal, idOf(index));
    const event = admitted[index];
    const list = event?.ok ? byRecipient.get(event.recipient) : undefined;
    if (list) list.splice(list.indexOf(index), 1);
  });
  return true;
}

/** Why this batch's key may not address `recipient` (the dashboard's reserved one); none if it may. */
function recipientRefusal(key: VerifiedKey, recipient: string): HeraldError | undefined {
  try {
    authorizeRecipient(key, recipient, 'http');
    return undefined;
  } catch (err) {
    if (err instanceof HeraldError) return err;
    throw err;
  }
}

/**
 * The batch's events still to deliver, recipient by recipient (as `byRecipient` holds them now):
 * their batch indices and, in the same order, what the live push and the inbox store take.
 */
function deliverable(
  admitted: readonly AcceptedEvent[],
  byRecipient: ReadonlyMap<string, readonly number[]>,
  idOf: (index: number) => string,
  ts: number,
): { indices: number[]; items: LiveBatchItem[] } {
  const indices: number[] = [];
  const items: LiveBatchItem[] = [];
  for (const [recipient, ofRecipient] of byRecipient) {
    for (const index of ofRecipient) {
      const event = admitted[index];
      if (!event?.ok) continue;
      indices.push(index);
      items.push({ recipient, id: idOf(index), ts, payload: event.payload });
    }
  }
  return { indices, items };
}

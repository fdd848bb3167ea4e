import { type Logger, toHeraldError } from '@herald/kit';
import type { IngressMetrics, Transport } from './metrics.js';
import { notDelivered, type Outcome, type OutcomeKind } from './outcome.js';

/**
 * The last step of a dispatch, run once per request by its transport's error boundary: counts
 * the outcome by its kind (a refusal also by its code) and how long it took, and hands the
 * outcome back to be written.
 */
export function createAnswer(metrics: Pick<IngressMetrics, 'dispatches' | 'duration' | 'refused'>) {
  function answer(transport: Transport, outcome: Outcome, startedMs: number): Outcome {
    const { kind } = outcome;
    metrics.dispatches.inc({ transport, outcome: kind });
    metrics.duration.observe({ transport, outcome: kind }, (performance.now() - startedMs) / 1000);
    if (kind === 'refused') metrics.refused.inc({ code: outcome.code });
    return outcome;
  }
  /**
   * A taken batch's answer: each event counted as a single dispatch's (the same counts and
   * observations as `answer` per event), with one counter update per outcome rather than per
   * event. Every event of a batch is answered at the same moment, so they share one duration.
   */
  answer.batch = (transport: Transport, outcomes: readonly Outcome[], startedMs: number) => {
    const seconds = (performance.now() - startedMs) / 1000;
    const counts = new Map<OutcomeKind, number>();
    for (const outcome of outcomes) {
      counts.set(outcome.kind, (counts.get(outcome.kind) ?? 0) + 1);
      if (outcome.kind === 'refused') metrics.refused.inc({ code: outcome.code });
    }
    for (const [kind, count] of counts) {
      const labels = { transport, outcome: kind };
      metrics.dispatches.inc(labels, count);
      for (let i = 0; i < count; i++) metrics.duration.observe(labels, seconds);
    }
  };
  return answer;
}

export type Answer = ReturnType<typeof createAnswer>;

/**
 * What a thrown error answers, through kit's one mapping: a HeraldError keeps its code; a bug is
 * a 500 quoting a request id, its details logged with `context`.
 */
export function outcomeOfError(
  err: unknown,
  logger: Logger,
  context: Record<string, unknown>,
): Outcome {
  return notDelivered(
    toHeraldError(err, {
      onInternal: (requestId) =>
        logger.error({ err, requestId, ...context }, 'dispatch failed with an internal error'),
      internalMessage: (requestId) =>
        `Internal error: nothing was confirmed; quote request id ${requestId} to support and retry`,
    }),
  );
}

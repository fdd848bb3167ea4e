import { type Logger, toHeraldError } from '@herald/kit';
import type { IngressMetrics, Outcome, Transport } from './metrics.js';
import { outcomeOf } from './metrics.js';
import { type DispatchResult, fromError } from './results.js';

/**
 * The last step of a dispatch, run once per request by its transport's error boundary: counts
 * the outcome (a refusal by its code) and how long it took, and hands the result back to be
 * written.
 */
export function createAnswer(metrics: Pick<IngressMetrics, 'dispatches' | 'duration' | 'refused'>) {
  function answer(transport: Transport, result: DispatchResult, startedMs: number): DispatchResult {
    const outcome = outcomeOf(result.status);
    metrics.dispatches.inc({ transport, outcome });
    metrics.duration.observe({ transport, outcome }, (performance.now() - startedMs) / 1000);
    if (outcome === 'refused' && 'error' in result.body)
      metrics.refused.inc({ code: result.body.error.code });
    return result;
  }
  /**
   * A taken batch's answer: each event counted as a single dispatch's (the same counts and
   * observations as `answer` per event), with one counter update per outcome rather than per
   * event. Every event of a batch is answered at the same moment, so they share one duration.
   */
  answer.batch = (transport: Transport, results: readonly DispatchResult[], startedMs: number) => {
    const seconds = (performance.now() - startedMs) / 1000;
    const counts = new Map<Outcome, number>();
    for (const result of results) {
      const outcome = outcomeOf(result.status);
      counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
      if (outcome === 'refused' && 'error' in result.body)
        metrics.refused.inc({ code: result.body.error.code });
    }
    for (const [outcome, count] of counts) {
      const labels = { transport, outcome };
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
export function resultOfError(
  err: unknown,
  logger: Logger,
  context: Record<string, unknown>,
): DispatchResult {
  return fromError(
    toHeraldError(err, {
      onInternal: (requestId) =>
        logger.error({ err, requestId, ...context }, 'dispatch failed with an internal error'),
      internalMessage: (requestId) =>
        `Internal error: nothing was confirmed; quote request id ${requestId} to support and retry`,
    }),
  );
}

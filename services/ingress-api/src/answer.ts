import { type Logger, toHeraldError } from '@herald/kit';
import type { IngressMetrics, Transport } from './metrics.js';
import { outcomeOf } from './metrics.js';
import { type DispatchResult, fromError } from './results.js';

/**
 * The last step of a dispatch, run once per request by its transport's error boundary: counts
 * the outcome (a refusal by its code) and how long it took, and hands the result back to be
 * written.
 */
export function createAnswer(metrics: Pick<IngressMetrics, 'dispatches' | 'duration' | 'refused'>) {
  return function answer(
    transport: Transport,
    result: DispatchResult,
    startedMs: number,
  ): DispatchResult {
    const outcome = outcomeOf(result.status);
    metrics.dispatches.inc({ transport, outcome });
    metrics.duration.observe({ transport, outcome }, (performance.now() - startedMs) / 1000);
    if (outcome === 'refused' && 'error' in result.body)
      metrics.refused.inc({ code: result.body.error.code });
    return result;
  };
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

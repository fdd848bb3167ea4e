import pLimit from 'p-limit';
import type { EdgeMetrics } from '../metrics.js';

/** At most `concurrency` queue checks at once; the waiting ones are a gauge. */
export function queueCheckLimiter(concurrency: number, metrics: EdgeMetrics) {
  const checkSlots = pLimit(concurrency);
  return <T>(check: () => Promise<T>): Promise<T> => {
    const result = checkSlots(check);
    metrics.queueChecksWaiting.set(checkSlots.pendingCount);
    return result.finally(() => metrics.queueChecksWaiting.set(checkSlots.pendingCount));
  };
}

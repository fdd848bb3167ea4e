import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { Gauge, type Registry } from 'prom-client';

/** The used heap read right after the last full (mark-compact) GC, bytes; undefined before one. */
let afterMajorGc: number | undefined;
let observing = false;

/** One observer for the process, however many registries (tests run several services in one). */
function observe(): void {
  if (observing) return;
  observing = true;
  new PerformanceObserver((list) => {
    const major = list
      .getEntries()
      .some(
        (e) =>
          (e as { detail?: { kind?: number } }).detail?.kind ===
          constants.NODE_PERFORMANCE_GC_MAJOR,
      );
    if (major) afterMajorGc = getHeapStatistics().used_heap_size;
  }).observe({ entryTypes: ['gc'] });
}

/**
 * `nodejs_heap_used_after_gc_bytes`: what the heap holds once a full GC has run, the live data,
 * without the garbage `nodejs_heap_size_used_bytes` also counts between collections. A leak of
 * JavaScript objects grows it; RSS that the allocator or V8 keep after a burst does not (the soak
 * judges both, docs/operations.md "Soak").
 */
export function registerHeapAfterGc(registry: Registry): void {
  observe();
  new Gauge({
    name: 'nodejs_heap_used_after_gc_bytes',
    help: 'Used V8 heap read right after the last full (mark-compact) garbage collection, bytes.',
    registers: [registry],
    collect() {
      if (afterMajorGc !== undefined) this.set(afterMajorGc);
    },
  });
}

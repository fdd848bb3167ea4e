import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { eventually } from '@herald/testkit';
import { describe, expect, it } from 'vitest';
import { createRegistry } from './ops.js';

/** A full GC, as `--expose-gc` would give (the flag set at run time, gc taken from a new context). */
function fullGc(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const value = (text: string) =>
  Number(/^nodejs_heap_used_after_gc_bytes(?:\{[^}]*\})? (\S+)/m.exec(text)?.[1]);

describe('nodejs_heap_used_after_gc_bytes', () => {
  it('reports the used heap read right after a full GC, below the heap used before it', async () => {
    const registry = createRegistry('test');
    // Garbage: the heap in use grows until a full GC collects it.
    let junk: unknown[] = Array.from({ length: 200_000 }, (_, i) => ({ i }));
    const usedWithJunk = process.memoryUsage().heapUsed;
    junk = [];
    fullGc();
    // The GC observer runs asynchronously, soon after the collection.
    let after = Number.NaN;
    await eventually(async () => {
      after = value(await registry.metrics());
      return after > 0;
    }, 'nodejs_heap_used_after_gc_bytes reported');
    expect(after).toBeLessThan(usedWithJunk);
    expect(junk).toEqual([]);
  });
});

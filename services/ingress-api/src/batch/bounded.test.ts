import { describe, expect, it } from 'vitest';
import { mapBounded } from './bounded.js';

/** A call that stays in flight until the test releases it, recording how many overlap. */
function gated() {
  const release: Array<() => void> = [];
  let inFlight = 0;
  let most = 0;
  const fn = async (item: number) => {
    inFlight++;
    most = Math.max(most, inFlight);
    await new Promise<void>((resolve) => release.push(resolve));
    inFlight--;
    return item * 10;
  };
  return { fn, release, most: () => most };
}

/** Lets pending promise callbacks run. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('mapBounded', () => {
  it('keeps exactly `limit` calls in flight, starting the next as one ends, results in order', async () => {
    const g = gated();
    const done = mapBounded([1, 2, 3, 4, 5, 6, 7], 3, g.fn);
    await turn();
    expect(g.release).toHaveLength(3); // all three started together, not one after another
    while (g.release.length > 0) {
      // Release the last started first: results still come back in the items' order.
      g.release.pop()?.();
      await turn();
    }
    expect(await done).toEqual([10, 20, 30, 40, 50, 60, 70]);
    expect(g.most()).toBe(3);
  });

  it('runs fewer calls than the limit when there are fewer items, and none for no items', async () => {
    const g = gated();
    const done = mapBounded([1, 2], 64, g.fn);
    await turn();
    expect(g.release).toHaveLength(2);
    for (const r of g.release.splice(0)) r();
    expect(await done).toEqual([10, 20]);
    expect(await mapBounded([], 4, g.fn)).toEqual([]);
  });
});

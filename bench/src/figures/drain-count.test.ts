import { describe, expect, it } from 'vitest';
import { DrainCount } from './drain-count.js';

describe('a storm counts every id', () => {
  it('counts a second arrival as a duplicate and a lower number after a higher as out of order', () => {
    const c = new DrainCount(2, 3, () => true);
    c.event(0, 'a', 1);
    c.event(0, 'c', 3);
    c.event(0, 'b', 2); // came after 3: out of order, still delivered
    c.event(0, 'c', 3); // again
    c.event(1, 'x', 10);
    expect(c).toMatchObject({ delivered: 4, duplicates: 1, outOfOrder: 1, complete: 1 });
    expect(c.drains[0]?.doneAt).toBeLessThan(Number.POSITIVE_INFINITY);
    expect(c.drains[1]?.doneAt).toBe(Number.POSITIVE_INFINITY);
  });

  it('keeps each recipient’s order apart: interleaved recipients are in order', () => {
    const c = new DrainCount(2, 2, () => true);
    c.event(0, 'a', 5);
    c.event(1, 'b', 2);
    c.event(0, 'c', 7);
    c.event(1, 'd', 4);
    expect(c).toMatchObject({ delivered: 4, duplicates: 0, outOfOrder: 0, complete: 2 });
  });

  it('does not count as delivered what came past the time bound, yet completes on it', () => {
    let inBound = true;
    const c = new DrainCount(1, 2, () => inBound);
    c.event(0, 'a', 1);
    inBound = false;
    c.event(0, 'b', 2);
    expect(c).toMatchObject({ delivered: 1, complete: 1 });
  });
});

import { describe, expect, it } from 'vitest';
import { CopyCounter, tallyCopies } from './topic-copies.js';

describe('CopyCounter', () => {
  it('counts distinct copy ids and every repeat of one as a duplicate', () => {
    const c = new CopyCounter();
    for (const id of ['a', 'b', 'a', 'c', 'a']) c.hit(id);
    expect(c.distinct).toBe(3);
    expect(c.duplicates).toBe(2);
    expect(c.lastAt).toBeGreaterThan(0);
    c.reset();
    expect([c.distinct, c.duplicates, c.lastAt]).toEqual([0, 0, 0]);
  });
});

describe('tallyCopies', () => {
  it('every member once: nothing missing, nothing twice', () => {
    expect(tallyCopies(1000, 1000)).toEqual({ missing: 0, duplicates: 0 });
  });

  it('counts the members short of a copy', () => {
    expect(tallyCopies(1000, 997)).toEqual({ missing: 3, duplicates: 0 });
  });

  it('counts stored copies beyond one per member as duplicates', () => {
    expect(tallyCopies(1000, 1004)).toEqual({ missing: 0, duplicates: 4 });
  });

  it('adds repeated ids at the sockets to the duplicates', () => {
    expect(tallyCopies(1000, 999, 7)).toEqual({ missing: 1, duplicates: 7 });
  });
});

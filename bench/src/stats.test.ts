import { describe, expect, it } from 'vitest';
import { median, percentile, SampleBuffer, summarize } from './stats.js';

describe('percentile (nearest rank)', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);

  it('returns an actual sample: p50 of 1..100 is 50, p99 is 99, p100 is 100', () => {
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
  });

  it('does not depend on the input order', () => {
    expect(percentile([5, 1, 4, 2, 3], 50)).toBe(3);
  });

  it('is the only sample when there is one, NaN when there is none', () => {
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  it('refuses a percentile outside (0, 100]', () => {
    expect(() => percentile([1], 0)).toThrow(RangeError);
    expect(() => percentile([1], 101)).toThrow(/\(0, 100\]/);
  });
});

describe('median of runs', () => {
  it('takes the middle run, or the mean of the two middle ones', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('ignores runs that produced no number', () => {
    expect(median([Number.NaN, 5, 1, Number.NaN, 3])).toBe(3);
    expect(median([Number.NaN])).toBeNaN();
  });
});

describe('summarize', () => {
  it('gives count, p50, p90, p99 and max', () => {
    const s = summarize(Array.from({ length: 1000 }, (_, i) => 1000 - i));
    expect(s).toEqual({ count: 1000, p50: 500, p90: 900, p99: 990, max: 1000 });
  });

  it('is all NaN for no samples', () => {
    expect(summarize([]).p99).toBeNaN();
  });
});

describe('SampleBuffer', () => {
  it('keeps samples up to its capacity and counts the ones it had to drop', () => {
    const b = new SampleBuffer(2);
    b.push(1);
    b.push(2);
    b.push(3);
    expect([...b.values()]).toEqual([1, 2]);
    expect(b.length).toBe(2);
    expect(b.dropped).toBe(1);
  });
});

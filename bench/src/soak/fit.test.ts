import { describe, expect, it } from 'vitest';
import { heapSlope, judgeSlope, pooledSlope, rssSlope } from './fit.js';
import type { Sample } from './samples.js';

const MB = 1024 * 1024;
const sample = (t: number, rssMb: number, life = '1', process = 'edge'): Sample => ({
  t,
  process,
  life,
  rssBytes: rssMb * MB,
});

describe('pooledSlope', () => {
  it('is the least-squares slope of one group', () => {
    // y = 2t + 1 with noise that cancels: the fit's slope is exactly 2.
    const fit = pooledSlope([
      [
        { t: 0, y: 1.5 },
        { t: 1, y: 2.5 },
        { t: 2, y: 4.5 },
        { t: 3, y: 7.5 },
      ],
    ]);
    expect(fit.slope).toBeCloseTo(2, 10);
    expect(fit.points).toBe(4);
  });

  it('fits parallel lines to groups, so a drop between them is not a slope', () => {
    const a = [0, 1, 2].map((t) => ({ t, y: 100 + t }));
    const b = [3, 4, 5].map((t) => ({ t, y: 20 + t }));
    expect(pooledSlope([a, b]).slope).toBeCloseTo(1, 10);
    // One line through both would fall steeply.
    expect(pooledSlope([[...a, ...b]]).slope).toBeLessThan(-10);
  });

  it('has no slope under 3 points or without spread in time', () => {
    expect(
      pooledSlope([
        [
          { t: 0, y: 1 },
          { t: 1, y: 2 },
        ],
      ]).slope,
    ).toBeUndefined();
    expect(pooledSlope([[0, 0, 0].map((t) => ({ t, y: t }))]).slope).toBeUndefined();
    expect(pooledSlope([]).slope).toBeUndefined();
  });
});

describe('rssSlope', () => {
  it('reads MB per hour after each life warms up, and sums the windows', () => {
    const samples: Sample[] = [];
    // Life 1: 100 MB jumping at warm-up, then 10 MB/h over 0.5 h; life 2 starts at 50 MB.
    for (let t = 0; t <= 1800; t += 60) samples.push(sample(t, t < 300 ? 300 : 100 + t / 360));
    for (let t = 1860; t <= 3600; t += 60)
      samples.push(sample(t, t < 2160 ? 5 : 50 + t / 360, '2'));
    samples.push(sample(0, 999, 'x', 'auth'));
    const fit = rssSlope(samples, 'edge', 300_000);
    expect(fit.mbPerHour).toBeCloseTo(10, 6);
    expect(fit.windowMs).toBe((1800 - 300 + (3600 - 2160)) * 1000);
  });

  it('leaves a run shorter than its warm-up without a slope', () => {
    const fit = rssSlope([sample(0, 1), sample(10, 2), sample(20, 3)], 'edge', 60_000);
    expect(fit).toEqual({ mbPerHour: undefined, points: 0, windowMs: 0 });
  });
});

describe('heapSlope', () => {
  it('fits the heap after GC of the samples that carry it, none for a process without it', () => {
    const samples: Sample[] = [];
    // RSS climbs 60 MB/h; the heap after GC 2 MB/h, first reported a minute in (no full GC yet).
    for (let t = 0; t <= 1800; t += 60)
      samples.push({
        ...sample(t, 100 + t / 60),
        ...(t < 60 ? {} : { heapAfterGcBytes: (30 + t / 1800) * MB }),
      });
    expect(rssSlope(samples, 'edge', 0).mbPerHour).toBeCloseTo(60, 6);
    const fit = heapSlope(samples, 'edge', 0);
    expect(fit.mbPerHour).toBeCloseTo(2, 6);
    expect(fit.points).toBe(30);
    expect(heapSlope([sample(0, 1), sample(60, 2), sample(120, 3)], 'edge', 0).points).toBe(0);
  });
});

describe('judgeSlope', () => {
  const opts = { maxMbPerHour: 50, minWindowMs: 600_000 };
  it('judges only a window at least the minimum long', () => {
    expect(judgeSlope({ mbPerHour: 500, points: 9, windowMs: 599_999 }, opts)).toBe('not judged');
    expect(judgeSlope({ mbPerHour: 50, points: 9, windowMs: 600_000 }, opts)).toBe('ok');
    expect(judgeSlope({ mbPerHour: 50.1, points: 9, windowMs: 600_000 }, opts)).toBe('too steep');
    expect(judgeSlope({ mbPerHour: undefined, points: 2, windowMs: 900_000 }, opts)).toBe(
      'not judged',
    );
  });
});

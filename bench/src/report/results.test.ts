import { describe, expect, it } from 'vitest';
import {
  formatNumber,
  RowCollector,
  ratioAtLeast,
  ratioAtMost,
  ratioBelow,
  ratioCheckAtLeast,
  ratioCheckAtMost,
  valueCheck,
} from './results.js';

describe('RowCollector', () => {
  it('gathers each run of a metric and subject into one row with its median', () => {
    const rows = new RowCollector('2');
    for (const v of [3, 1, 2]) rows.add('deliveries/s', 'Herald', 'herald', 'deliveries/s', v);
    rows.add('deliveries/s', 'raw ws', 'baseline', 'deliveries/s', 10);
    expect(rows.rows()).toEqual([
      {
        figure: '2',
        metric: 'deliveries/s',
        subject: 'Herald',
        role: 'herald',
        unit: 'deliveries/s',
        runs: [3, 1, 2],
        median: 2,
      },
      {
        figure: '2',
        metric: 'deliveries/s',
        subject: 'raw ws',
        role: 'baseline',
        unit: 'deliveries/s',
        runs: [10],
        median: 10,
      },
    ]);
    expect(rows.median('deliveries/s', 'raw ws')).toBe(10);
    expect(rows.median('nothing', 'raw ws')).toBeNaN();
  });
});

describe('checks', () => {
  it('ratioAtLeast passes at exactly the target ratio and fails just below it', () => {
    expect(ratioAtLeast('2', 't', 50, 100, 0.5)).toEqual({
      figure: '2',
      target: 't',
      measured: '0.500×',
      pass: true,
    });
    expect(ratioAtLeast('2', 't', 49.9, 100, 0.5).pass).toBe(false);
  });

  it('ratioAtMost passes at exactly the target ratio and fails just above it', () => {
    expect(ratioAtMost('1', 't', 3, 1, 3).pass).toBe(true);
    expect(ratioAtMost('1', 't', 3.01, 1, 3).pass).toBe(false);
  });

  it('shows a third decimal when the ratio is within 0.01 of its target', () => {
    expect(ratioAtLeast('6', 't', 473, 594, 0.8)).toMatchObject({
      measured: '0.796×',
      pass: false,
    });
    expect(ratioBelow('5', 't', 33_719, 33_613)).toMatchObject({ measured: '1.003×', pass: false });
    expect(ratioAtLeast('2', 't', 1, 4, 0.5).measured).toBe('0.25×');
  });

  it('ratioBelow needs strictly less than the baseline', () => {
    expect(ratioBelow('5', 't', 99, 100).pass).toBe(true);
    expect(ratioBelow('5', 't', 100, 100).pass).toBe(false);
  });

  it('cannot evaluate what was not measured', () => {
    expect(ratioAtLeast('2', 't', Number.NaN, 1, 1)).toMatchObject({
      measured: 'not measured',
      pass: null,
    });
    expect(ratioAtMost('5', 't', 1, 0, 1).pass).toBeNull();
    expect(valueCheck('1', 't', Number.NaN, 'ms', () => true).pass).toBeNull();
  });

  it('valueCheck shows the value with its unit', () => {
    expect(valueCheck('1', 'p99 ≤ 5 ms', 4.2, 'ms', (v) => v <= 5)).toMatchObject({
      measured: '4.20 ms',
      pass: true,
    });
  });
});

describe('same-run ratios', () => {
  it('divides run i by run i and takes the median, not the ratio of medians', () => {
    const rows = new RowCollector('2');
    // A busy second run slows both sides: per-run ratios stay 2×, the medians' ratio would not.
    for (const [h, b] of [
      [200, 100],
      [20, 10],
      [160, 80],
    ] as const) {
      rows.add('rate', 'H', 'herald', '/s', h);
      rows.add('rate', 'B', 'baseline', '/s', b);
    }
    const r = rows.ratio('H ÷ B', 'rate', 'H', 'B');
    expect(r.runs).toEqual([2, 2, 2]);
    expect(r.median).toBe(2);
    expect(ratioCheckAtLeast('2', 'H ≥ 2× B', r, 2)).toMatchObject({
      pass: true,
      measured: '2.000×',
    });
    expect(ratioCheckAtLeast('2', 'H ≥ 5× B', r, 5).pass).toBe(false);
    expect(ratioCheckAtMost('1', 'H ≤ 2× B', r, 2).pass).toBe(true);
    expect(ratioCheckAtMost('1', 'H ≤ 1.5× B', r, 1.5).pass).toBe(false);
  });

  it('cannot evaluate a ratio of a subject that was not measured', () => {
    const rows = new RowCollector('3');
    rows.add('rate', 'H', 'herald', '/s', 1);
    const r = rows.ratio('H ÷ B', 'rate', 'H', 'B');
    expect(r.runs).toEqual([]);
    expect(ratioCheckAtLeast('3', 't', r, 1)).toMatchObject({
      measured: 'not measured',
      pass: null,
    });
  });
});

describe('formatNumber', () => {
  it('keeps three significant figures and separates thousands', () => {
    expect(formatNumber(123_456.7)).toBe('123,457');
    expect(formatNumber(123.4)).toBe('123');
    expect(formatNumber(12.34)).toBe('12.3');
    expect(formatNumber(1.234)).toBe('1.23');
    expect(formatNumber(0.01234)).toBe('0.012');
    expect(formatNumber(Number.NaN)).toBe('–');
  });
});

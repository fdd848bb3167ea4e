import { describe, expect, it } from 'vitest';
import { loadSoakConfig } from './config.js';

describe('loadSoakConfig', () => {
  it('defaults to a 10-minute run sampled every 10 s, restarts at 40% and 70%', () => {
    expect(loadSoakConfig({})).toEqual({
      minutes: 10,
      target: 'dev',
      sampleMs: 10_000,
      rate: 20,
      churnPerS: 3,
      warmupMs: 120_000,
      maxSlopeMbPerH: 50,
      maxHeapSlopeMbPerH: 10,
      slopeMinWindowMs: 1_200_000,
      drainTimeoutMs: 240_000,
      resultsDir: 'bench/results',
      edgeRestartAtMs: 240_000,
      natsRestartAtMs: 420_000,
    });
  });

  it('takes a fifth of a short run as its warm-up', () => {
    expect(loadSoakConfig({ SOAK_MINUTES: '3' }).warmupMs).toBe(36_000);
    expect(loadSoakConfig({ SOAK_MINUTES: '60' }).warmupMs).toBe(120_000);
  });

  it.each([
    ['SOAK_MINUTES', 1, 240],
    ['SOAK_SAMPLE_S', 1, 300],
    ['SOAK_RATE', 1, 500],
    ['SOAK_CHURN_PER_S', 0, 50],
    ['SOAK_WARMUP_S', 0, 3600],
    ['SOAK_MAX_SLOPE_MB_PER_H', 1, 10_000],
    ['SOAK_MAX_HEAP_SLOPE_MB_PER_H', 1, 10_000],
    ['SOAK_SLOPE_MIN_WINDOW_MIN', 1, 240],
    ['SOAK_DRAIN_TIMEOUT_S', 10, 3600],
  ])(
    '%s takes %i..%i and refuses a value past either bound, naming the field',
    (name, min, max) => {
      expect(() => loadSoakConfig({ [name]: String(min) })).not.toThrow();
      expect(() => loadSoakConfig({ [name]: String(max) })).not.toThrow();
      expect(() => loadSoakConfig({ [name]: String(max + 1) })).toThrow(
        new RegExp(
          `${name} \\("${max + 1}"\\): must be at most ${max}: set it to ${min}\\.\\.${max}`,
        ),
      );
      expect(() => loadSoakConfig({ [name]: String(min - 1) })).toThrow(
        new RegExp(`${name} \\("${min - 1}"\\): must be at least ${min}`),
      );
      expect(() => loadSoakConfig({ [name]: '2.5' })).toThrow(new RegExp(`${name}.*integer`));
    },
  );

  it('takes the dev and compose targets, dev by default, and refuses any other', () => {
    expect(loadSoakConfig({}).target).toBe('dev');
    expect(loadSoakConfig({ SOAK_TARGET: 'compose' }).target).toBe('compose');
    expect(() => loadSoakConfig({ SOAK_TARGET: 'cluster' })).toThrow(
      /SOAK_TARGET \("cluster"\): must be dev .* or compose/,
    );
  });
});

import { describe, expect, it } from 'vitest';
import { closedLoop, openLoop, waitUntil } from './pace.js';

describe('closedLoop', () => {
  it('stops at its count bound, with no more than `concurrency` operations in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const r = await closedLoop(4, { maxCount: 50, durationMs: 60_000 }, async () => {
      most = Math.max(most, ++inFlight);
      await new Promise((res) => setImmediate(res));
      inFlight--;
    });
    expect(r).toMatchObject({ issued: 50, completed: 50, failed: 0 });
    expect(most).toBe(4);
  });

  it('stops at its time bound when the count is out of reach', async () => {
    const r = await closedLoop(
      2,
      { maxCount: Number.MAX_SAFE_INTEGER, durationMs: 30 },
      () => new Promise((res) => setTimeout(res, 5)),
    );
    expect(r.issued).toBeGreaterThan(0);
    expect(r.issued).toBeLessThan(1000);
    expect(r.completed).toBe(r.issued);
  });

  it('counts failures and keeps the first message', async () => {
    const r = await closedLoop(1, { maxCount: 3, durationMs: 60_000 }, async (i) => {
      if (i > 0) throw new Error(`boom ${i}`);
    });
    expect(r).toMatchObject({ completed: 1, failed: 2, firstError: 'boom 1' });
  });
});

describe('openLoop', () => {
  it('issues rate × duration operations in order, each told when it was issued', async () => {
    const issued: number[] = [];
    const r = await openLoop(1000, { maxCount: 1000, durationMs: 40 }, async (i, at) => {
      issued[i] = at;
    });
    expect(r.issued).toBe(40);
    expect(r.completed).toBe(40);
    expect(issued).toHaveLength(40);
    for (let i = 1; i < issued.length; i++) {
      expect(issued[i] as number).toBeGreaterThanOrEqual(issued[i - 1] as number);
    }
  });

  it('is bounded by its count before its duration', async () => {
    const r = await openLoop(1000, { maxCount: 5, durationMs: 60_000 }, async () => {});
    expect(r.issued).toBe(5);
  });

  it('refuses a rate that is not positive', async () => {
    await expect(openLoop(0, { maxCount: 1, durationMs: 1 }, async () => {})).rejects.toThrow(
      /rate must be positive/,
    );
  });
});

describe('waitUntil', () => {
  it('returns true once the condition holds and false when the time runs out', async () => {
    let n = 0;
    expect(await waitUntil(() => ++n > 3, 1000, 0)).toBe(true);
    expect(await waitUntil(() => false, 5)).toBe(false);
  });
});

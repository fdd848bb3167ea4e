import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Deadlines } from './deadlines.js';

const T0 = 1_000_000;

describe('Deadlines', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: T0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fires on the first tick at or after the deadline, never before it', () => {
    const d = new Deadlines({ tickMs: 1000 });
    const fired: number[] = [];
    d.at(T0 + 2500, () => fired.push(Date.now()));
    vi.advanceTimersByTime(2000);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1000);
    expect(fired).toEqual([T0 + 3000]);
    expect(d.size).toBe(0);
  });

  it('fires a deadline at a tick boundary on that tick', () => {
    const d = new Deadlines({ tickMs: 1000 });
    const fire = vi.fn();
    d.at(T0 + 1000, fire);
    vi.advanceTimersByTime(999);
    expect(fire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fire).toHaveBeenCalledOnce();
  });

  it('fires a deadline already passed on the next tick', () => {
    const d = new Deadlines({ tickMs: 1000 });
    const fire = vi.fn();
    d.at(T0 - 5000, fire);
    vi.advanceTimersByTime(1000);
    expect(fire).toHaveBeenCalledOnce();
  });

  it('forgets a cancelled deadline and stops its timer once none is left', () => {
    const d = new Deadlines({ tickMs: 1000 });
    const fire = vi.fn();
    const a = d.at(T0 + 3_600_000, fire);
    const b = d.at(T0 + 3_600_001, fire);
    expect(d.size).toBe(2);
    expect(vi.getTimerCount()).toBe(1);
    a.cancel();
    a.cancel();
    expect(d.size).toBe(1);
    b.cancel();
    expect(d.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(3_700_000);
    expect(fire).not.toHaveBeenCalled();
  });

  it('keeps ONE timer however many deadlines, each at its own ms', () => {
    const d = new Deadlines({ tickMs: 1000 });
    const handles = Array.from({ length: 1000 }, (_, i) => d.at(T0 + 3_600_000 + i, () => {}));
    expect(vi.getTimerCount()).toBe(1);
    for (const h of handles) h.cancel();
    expect(d.size).toBe(0);
  });

  it('fires every slot passed while the event loop stalled, in deadline order', () => {
    const d = new Deadlines({ tickMs: 1000 });
    const fired: string[] = [];
    d.at(T0 + 4500, () => fired.push('b'));
    d.at(T0 + 1500, () => fired.push('a'));
    vi.setSystemTime(T0 + 10_000);
    vi.advanceTimersToNextTimer();
    expect(fired).toEqual(['a', 'b']);
  });

  it('fires a deadline set by a firing callback on a later tick, not lost', () => {
    const d = new Deadlines({ tickMs: 1000 });
    const second = vi.fn();
    d.at(T0 + 1000, () => d.at(Date.now(), second));
    vi.advanceTimersByTime(1000);
    expect(second).not.toHaveBeenCalled();
    expect(d.size).toBe(1);
    vi.advanceTimersByTime(1000);
    expect(second).toHaveBeenCalledOnce();
    expect(d.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startHeartbeat } from './heartbeat.js';

const fleet = (n: number) =>
  Array.from({ length: n }, () => ({
    beats: 0,
    heartbeat() {
      this.beats++;
    },
  }));

describe('startHeartbeat', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('spreads the pings over the interval: one slice per tick, every socket once per interval', () => {
    const sockets = fleet(300);
    const stop = startHeartbeat(() => sockets, 30_000);
    vi.advanceTimersByTime(1_000);
    expect(sockets.filter((s) => s.beats === 1)).toHaveLength(10);
    vi.advanceTimersByTime(29_000);
    expect(sockets.every((s) => s.beats === 1)).toBe(true);
    vi.advanceTimersByTime(30_000);
    expect(sockets.every((s) => s.beats === 2)).toBe(true);
    stop();
    vi.advanceTimersByTime(60_000);
    expect(sockets.every((s) => s.beats === 2)).toBe(true);
  });

  it('keeps a socket on its slot, so two of its pings are a whole interval apart', () => {
    const sockets = fleet(30);
    const stop = startHeartbeat(() => sockets, 30_000);
    vi.advanceTimersByTime(15_000);
    const pinged = sockets.filter((s) => s.beats === 1);
    sockets.splice(0, 10); // sockets that leave must not shift the others' slots
    const times: number[] = [];
    const watched = sockets[sockets.length - 1];
    if (!watched) throw new Error('no socket');
    const original = watched.heartbeat.bind(watched);
    watched.heartbeat = () => {
      times.push(Date.now());
      original();
    };
    vi.advanceTimersByTime(60_000);
    stop();
    expect(pinged).toHaveLength(15);
    expect(times).toHaveLength(2);
    expect((times[1] ?? 0) - (times[0] ?? 0)).toBe(30_000);
  });

  it('pings everything at once when the interval is under two seconds', () => {
    const sockets = fleet(50);
    const stop = startHeartbeat(() => sockets, 100);
    vi.advanceTimersByTime(100);
    stop();
    expect(sockets.every((s) => s.beats === 1)).toBe(true);
  });
});

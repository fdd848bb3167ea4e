// @vitest-environment node
import { afterEach, describe, expect, it } from 'vitest';
import { runForLeader } from '../../src/leader.js';

// Generous against a loaded machine: a leader is taken as gone only after ten missed heartbeats.
const TIMING = { heartbeatMs: 100, timeoutMs: 1000 };

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * The BroadcastChannel fallback (Node has BroadcastChannel and no Web Locks): several candidates
 * on one channel stand in for tabs. Web Locks across real tabs are tested in Chromium.
 */
describe('leader election without Web Locks (BroadcastChannel heartbeat)', () => {
  const stops: Array<() => void> = [];
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });

  it('elects exactly one of three, and another takes over when the leader withdraws', async () => {
    const name = `test-${Math.random()}`;
    const leading = new Set<number>();
    const terms: number[] = [];
    const candidates = [0, 1, 2].map((i) => {
      const stop = runForLeader(
        name,
        () => {
          leading.add(i);
          terms.push(i);
          return () => leading.delete(i);
        },
        TIMING,
      );
      stops.push(stop);
      return stop;
    });
    await until(() => leading.size === 1, 'a leader');
    // Several heartbeats later, still (or again) exactly one.
    await new Promise((r) => setTimeout(r, TIMING.timeoutMs * 1.5));
    await until(() => leading.size === 1, 'one leader');
    const first = [...leading][0] ?? -1;
    candidates[first]?.();
    expect(leading.size).toBe(0);
    await until(() => leading.size === 1, 'a new leader');
    expect([...leading][0]).not.toBe(first);
    // The fallback is best effort (every current browser has Web Locks): under load two
    // candidates may both lead for a moment, but the lower id keeps it and one remains.
    await new Promise((r) => setTimeout(r, TIMING.timeoutMs * 1.5));
    await until(() => leading.size === 1, 'one leader after the takeover');
    expect(leading.has(first)).toBe(false);
    expect(terms.filter((t) => t === first)).toHaveLength(1);
  });
});

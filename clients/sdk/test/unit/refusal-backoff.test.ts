import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FakeSocket } from './fake-websocket.js';
import { accept, expectRetryAfter, settle, setup, uuid } from './helpers.js';

// A cap above the edge's hint (1 s), so the hint and the jitter on top of it both show.
const BACKOFF = { baseMs: 100, capMs: 5000, stableMs: 5000 };

/** What the edge does past its connect rate: error frame, then 4429 with the hint in the reason. */
function tooManyConnects(sock: FakeSocket, reason: string): void {
  sock.open();
  const error = { code: 'too_many_connects', message: 'Too many connects from this address' };
  sock.raw(JSON.stringify({ type: 'error', error }));
  sock.serverClose(4429, reason);
}
const HINT_1S = '{"code":"too_many_connects","retry_after":1}';

describe('backoff after a refused connect (fake timers, injected random)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('waits retry_after, plus the full-jitter window of the attempt, and reports the hint', async () => {
    // Each wait draws once; the sequence is the test's, so every delay is known to the ms.
    const random = vi.spyOn(Math, 'random');
    for (const r of [0, 0.5, 0.5, 0.25, 0.9999]) random.mockReturnValueOnce(r);
    const { herald, sockets, last } = setup({ backoff: BACKOFF });
    const sub = herald.subscribe(uuid());
    const errors: unknown[] = [];
    sub.onError((e) => errors.push({ code: e.code, closeCode: e.closeCode, s: e.retryAfter }));
    await settle();
    // Windows 100, 200, 400, 800, 1600 on top of the 1000 ms hint.
    for (const delay of [1000, 1100, 1200, 1200, 2599]) {
      tooManyConnects(last(), HINT_1S);
      await expectRetryAfter(sockets, delay);
    }
    expect(errors).toHaveLength(5);
    expect(errors[0]).toEqual({ code: 'too_many_connects', closeCode: 4429, s: 1 });
    herald.disconnect();
  });

  it('never waits longer than capMs, whatever the hint says', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.9999);
    const { herald, sockets, last } = setup({ backoff: BACKOFF });
    herald.subscribe(uuid());
    await settle();
    tooManyConnects(last(), '{"code":"too_many_connects","retry_after":4.95}');
    await expectRetryAfter(sockets, 5000);
    tooManyConnects(last(), '{"code":"too_many_connects","retry_after":86400}');
    await expectRetryAfter(sockets, 5000);
    herald.disconnect();
  });

  it.each([
    ['an edge that sends no hint', '{"code":"too_many_connects"}'],
    ['a negative hint', '{"code":"too_many_connects","retry_after":-1}'],
    ['a hint that is not a number', '{"code":"too_many_connects","retry_after":"1"}'],
    ['a reason that is not JSON', 'too many'],
  ])('falls back to full jitter for %s: no cap/2 wait, no immediate loop', async (_n, reason) => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { herald, sockets, last } = setup({ backoff: BACKOFF });
    const sub = herald.subscribe(uuid());
    const codes: string[] = [];
    sub.onError((e) => codes.push(e.code));
    await settle();
    for (const delay of [50, 100, 200, 400, 800, 1600, 2500, 2500]) {
      tooManyConnects(last(), reason);
      await expectRetryAfter(sockets, delay);
    }
    expect(codes.every((c) => c === 'too_many_connects')).toBe(true);
    herald.disconnect();
  });

  it('takes the hint from the close reason when no error frame came (any 4xxx it retries)', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const { herald, sockets, last } = setup({ backoff: BACKOFF });
    herald.subscribe(uuid());
    await settle();
    last().open();
    last().serverClose(4503, '{"code":"unavailable","retry_after":2}');
    await expectRetryAfter(sockets, 2000);
    herald.disconnect();
  });

  it('a connection that stayed up stableMs resets the schedule the refusals grew', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { herald, sockets, last } = setup({ backoff: BACKOFF });
    herald.subscribe(uuid());
    await settle();
    for (const delay of [1050, 1100, 1200, 1400]) {
      tooManyConnects(last(), HINT_1S);
      await expectRetryAfter(sockets, delay);
    }
    await accept(last());
    await vi.advanceTimersByTimeAsync(BACKOFF.stableMs);
    last().serverClose(1006);
    await expectRetryAfter(sockets, 50);
    // Refused again after the reset: the first window again, on top of the hint.
    tooManyConnects(last(), HINT_1S);
    await expectRetryAfter(sockets, 1100);
    herald.disconnect();
  });

  it('spreads a fleet refused together over the hint plus its window (no herd at 1 s)', async () => {
    // 200 clients, one uniform draw each (a fixed sequence): their retries land in [1000, 1100).
    let i = 0;
    vi.spyOn(Math, 'random').mockImplementation(() => (i++ % 200) / 200);
    const fleet = Array.from({ length: 200 }, () => setup({ backoff: BACKOFF }));
    for (const c of fleet) c.herald.subscribe(uuid());
    await settle();
    for (const c of fleet) tooManyConnects(c.last(), HINT_1S);
    await vi.advanceTimersByTimeAsync(999);
    expect(fleet.filter((c) => c.sockets.length === 2)).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(50);
    const early = fleet.filter((c) => c.sockets.length === 2).length;
    expect(early).toBe(100);
    await vi.advanceTimersByTimeAsync(50);
    expect(fleet.filter((c) => c.sockets.length === 2)).toHaveLength(200);
    for (const c of fleet) c.herald.disconnect();
  });
});

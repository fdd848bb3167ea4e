import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { accept, expectRetryAfter, settle, setup, uuid } from './helpers.js';

// backoff in helpers: base 100 ms, cap 800 ms, stable after 5000 ms.
describe('reconnect schedule (fake timers)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('doubles the window on each failure up to the cap, with full jitter', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { herald, sockets, last } = setup();
    herald.subscribe(uuid());
    await settle();
    expect(sockets).toHaveLength(1);
    // Windows 100, 200, 400, 800, 800 (capped); jitter 0.5 puts each retry mid-window.
    for (const delay of [50, 100, 200, 400, 400, 400]) {
      last().serverClose(1006);
      await expectRetryAfter(sockets, delay);
    }
    herald.disconnect();
  });

  it('draws each wait uniformly from [0, window): random 0 retries at once, random ~1 at the window end', async () => {
    const random = vi.spyOn(Math, 'random').mockReturnValue(0);
    const { herald, sockets, last } = setup();
    herald.subscribe(uuid());
    await settle();
    last().serverClose(1006);
    await expectRetryAfter(sockets, 0);
    random.mockReturnValue(0.9999);
    last().serverClose(1006);
    await expectRetryAfter(sockets, 199);
    herald.disconnect();
  });

  it('resets to the base window after a connection that stayed up for stableMs, not before', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { herald, sockets, last } = setup();
    herald.subscribe(uuid());
    await settle();
    for (const delay of [50, 100, 200]) {
      last().serverClose(1006);
      await expectRetryAfter(sockets, delay);
    }
    // Up for 4999 ms: not stable, the schedule goes on (window 800).
    await accept(last());
    await vi.advanceTimersByTimeAsync(4999);
    last().serverClose(1001);
    await expectRetryAfter(sockets, 400);
    // Up for exactly 5000 ms: stable, back to the first window.
    await accept(last());
    await vi.advanceTimersByTimeAsync(5000);
    last().serverClose(1001);
    await expectRetryAfter(sockets, 50);
    herald.disconnect();
  });

  it('waits between cap/2 and cap after 4429 (connection cap), and reports it', async () => {
    const random = vi.spyOn(Math, 'random').mockReturnValue(0);
    const { herald, sockets, last } = setup();
    const sub = herald.subscribe(uuid());
    const errors: unknown[] = [];
    sub.onError((e) => errors.push({ code: e.code, closeCode: e.closeCode }));
    await settle();
    last().refuse(4429, 'connection_limit');
    await expectRetryAfter(sockets, 400);
    random.mockReturnValue(0.9999);
    last().refuse(4429, 'connection_limit');
    await expectRetryAfter(sockets, 799);
    expect(errors).toEqual([
      { code: 'connection_limit', closeCode: 4429 },
      { code: 'connection_limit', closeCode: 4429 },
    ]);
    herald.disconnect();
  });

  it.each([
    [4400, 'invalid_recipient'],
    [4401, 'key_revoked'],
    [4403, 'origin_mismatch'],
  ])(
    'never retries after %i (%s): reports it once, stays disconnected',
    async (closeCode, code) => {
      const { herald, sockets, last } = setup();
      const states: string[] = [];
      herald.onConnectionChange((s) => states.push(s));
      const sub = herald.subscribe(uuid());
      const errors: Array<{ code: string; closeCode: number | undefined; message: string }> = [];
      sub.onError((e) => errors.push({ code: e.code, closeCode: e.closeCode, message: e.message }));
      await settle();
      last().refuse(closeCode, code, 'the server message');
      await vi.advanceTimersByTimeAsync(60_000);
      expect(sockets).toHaveLength(1);
      expect(errors).toEqual([{ code, closeCode, message: 'the server message' }]);
      expect(states).toEqual([]);
      expect(sub.connected()).toBe(false);
      expect(vi.getTimerCount()).toBe(0);
      herald.disconnect();
    },
  );

  it('takes the code from the close reason when no error frame came', async () => {
    const { herald, sockets, last } = setup();
    const sub = herald.subscribe(uuid());
    const codes: string[] = [];
    sub.onError((e) => codes.push(e.code));
    await settle();
    last().open();
    last().serverClose(4401, '{"code":"invalid_api_key"}');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(codes).toEqual(['invalid_api_key']);
    expect(sockets).toHaveLength(1);
    herald.disconnect();
  });

  it.each([
    [1001, 'edge shutting down'],
    [1006, 'network dropped'],
    [1013, 'slow consumer'],
    [1000, 'closed normally by the edge'],
  ])('retries after %i (%s) without reporting an error', async (code) => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { herald, sockets, last } = setup();
    const sub = herald.subscribe(uuid());
    const errors: unknown[] = [];
    sub.onError((e) => errors.push(e));
    await settle();
    await accept(last());
    last().serverClose(code);
    await expectRetryAfter(sockets, 50);
    expect(errors).toEqual([]);
    herald.disconnect();
  });

  it('retries after 4503 (edge full) and reports it', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { herald, sockets, last } = setup();
    const sub = herald.subscribe(uuid());
    const codes: string[] = [];
    sub.onError((e) => codes.push(e.code));
    await settle();
    last().refuse(4503, 'unavailable');
    await expectRetryAfter(sockets, 50);
    expect(codes).toEqual(['unavailable']);
    herald.disconnect();
  });

  it('drops a socket that is not open after connectTimeoutMs, and retries', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { herald, sockets, last } = setup({ connectTimeoutMs: 500 });
    herald.subscribe(uuid());
    await settle();
    const first = last();
    await vi.advanceTimersByTimeAsync(499);
    expect(first.closedWith).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(first.closedWith).toBe(1000);
    await expectRetryAfter(sockets, 50);
    herald.disconnect();
  });

  it('reconnects at once when the browser comes back online or the tab becomes visible', async () => {
    const win = new EventTarget();
    const doc = Object.assign(new EventTarget(), { visibilityState: 'hidden' });
    vi.stubGlobal('addEventListener', win.addEventListener.bind(win));
    vi.stubGlobal('removeEventListener', win.removeEventListener.bind(win));
    vi.stubGlobal('document', doc);
    try {
      vi.spyOn(Math, 'random').mockReturnValue(0.99);
      const { herald, sockets, last } = setup({ backoff: { baseMs: 60_000, capMs: 60_000 } });
      herald.subscribe(uuid());
      await settle();
      last().serverClose(1006);
      win.dispatchEvent(new Event('online'));
      await settle();
      expect(sockets).toHaveLength(2);
      last().serverClose(1006);
      doc.dispatchEvent(new Event('visibilitychange'));
      await settle();
      expect(sockets, 'still hidden: no retry').toHaveLength(2);
      doc.visibilityState = 'visible';
      doc.dispatchEvent(new Event('visibilitychange'));
      await settle();
      expect(sockets).toHaveLength(3);
      // An open socket is left alone, and after disconnect nothing listens any more.
      await accept(last());
      win.dispatchEvent(new Event('online'));
      await settle();
      expect(sockets).toHaveLength(3);
      herald.disconnect();
      win.dispatchEvent(new Event('online'));
      doc.dispatchEvent(new Event('visibilitychange'));
      await settle();
      expect(sockets).toHaveLength(3);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});

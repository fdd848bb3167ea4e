import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { accept, settle, setup, uuid } from './helpers.js';

/** An unsigned token whose payload carries `exp` (the SDK only reads exp; the edge verifies). */
function tokenExpiringIn(seconds: number, tag: string): string {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const exp = Math.floor(Date.now() / 1000) + seconds;
  return `${b64({ alg: 'HS256' })}.${b64({ sub: tag, exp })}.sig-${tag}`;
}

describe('recipient tokens (fake timers)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('puts getToken’s token in the connect URL, then refreshes it in-band before it expires', async () => {
    let n = 0;
    const asked: string[] = [];
    const { herald, last, sockets } = setup({
      getToken: async (r) => {
        asked.push(r);
        n += 1;
        return tokenExpiringIn(600, `t${n}`);
      },
    });
    const to = uuid();
    herald.subscribe(to);
    await settle();
    expect(asked).toEqual([to]);
    expect(new URL(last().url).searchParams.get('token')).toBe(tokenExpiringIn(600, 't1'));
    await accept(last());
    // Ten minutes of life: asked again a minute before the end, not earlier.
    await vi.advanceTimersByTimeAsync(539_000);
    expect(asked).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(asked).toHaveLength(2);
    const frames = last().sent.map((s) => JSON.parse(s));
    expect(frames).toEqual([{ type: 'token', token: expect.stringContaining('sig-t2') }]);
    expect(sockets).toHaveLength(1);
    herald.disconnect();
  });

  it('reconnects with a fresh token after 4401 token_expired (never stops on it)', async () => {
    let n = 0;
    const { herald, last, sockets } = setup({
      getToken: async () => {
        n += 1;
        return tokenExpiringIn(600, `t${n}`);
      },
    });
    const errors: string[] = [];
    herald.onError((e) => errors.push(e.code));
    herald.subscribe(uuid());
    await settle();
    await accept(last());
    last().serverClose(4401, JSON.stringify({ code: 'token_expired' }));
    await vi.advanceTimersByTimeAsync(1000);
    expect(errors).toEqual(['token_expired']);
    expect(sockets).toHaveLength(2);
    expect(new URL(last().url).searchParams.get('token')).toContain('sig-t2');
    herald.disconnect();
  });

  it('stops on a refused token (4403 token_recipient_mismatch), as on any other refusal', async () => {
    const { herald, last, sockets } = setup({ token: tokenExpiringIn(600, 'fixed') });
    const errors: string[] = [];
    herald.onError((e) => errors.push(e.code));
    herald.subscribe(uuid());
    await settle();
    last().refuse(4403, 'token_recipient_mismatch');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(errors).toEqual(['token_recipient_mismatch']);
    expect(sockets).toHaveLength(1);
    herald.disconnect();
  });

  it('refuses token with getToken, and a token that is not a string', () => {
    expect(() => setup({ token: 'a', getToken: async () => 'b' })).toThrow(/not both/);
    expect(() => setup({ token: '' })).toThrow(/options.token/);
  });
});

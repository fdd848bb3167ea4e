import { describe, expect, it } from 'vitest';
import { TokenCache } from './token-cache.js';

describe('TokenCache', () => {
  it('keeps a token until the margin before expiry, and shares one fetch', async () => {
    let now = 0;
    let fetches = 0;
    const cache = new TokenCache(async () => ({ token: `t${++fetches}`, expiresInMs: 3600_000 }), {
      marginMs: 60_000,
      now: () => now,
    });
    expect(await Promise.all([cache.get(), cache.get()])).toEqual(['t1', 't1']);
    now = 3600_000 - 60_001;
    expect(await cache.get()).toBe('t1');
    now = 3600_000 - 60_000;
    expect(await cache.get()).toBe('t2');
    cache.clear();
    expect(await cache.get()).toBe('t3');
    expect(fetches).toBe(3);
  });

  it('does not keep a failed fetch', async () => {
    let fail = true;
    const cache = new TokenCache(
      async () => {
        if (fail) throw new Error('down');
        return { token: 'ok', expiresInMs: 1000_000 };
      },
      { marginMs: 0 },
    );
    await expect(cache.get()).rejects.toThrow('down');
    fail = false;
    expect(await cache.get()).toBe('ok');
  });
});

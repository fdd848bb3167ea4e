import { HeraldError } from '@herald/proto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type Verdict, VerdictCache } from './verdict-cache.js';

const opts = { ttlMs: 1000, maxEntries: 2, negativeTtlMs: 500, maxNegativeEntries: 2 };

/** A cache over scripted answers, counting how often each id was asked. */
function scripted(answer: (id: string) => { verdict: Verdict<string>; cache: boolean }) {
  const asked: string[] = [];
  const cache = new VerdictCache<string>(async (id) => {
    asked.push(id);
    return answer(id);
  }, opts);
  return { cache, asked };
}

const found = (value: string) => ({ verdict: { ok: true as const, value }, cache: true });
const refused = (code: 'key_revoked' | 'plan_inactive', cache = true) => ({
  verdict: { ok: false as const, error: new HeraldError(code, code) },
  cache,
});

describe('VerdictCache', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 10_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reuses a value for its TTL, asks ahead after three quarters of it, and again after it', async () => {
    const { cache, asked } = scripted((id) => found(`v-${id}`));
    expect(await cache.get('a')).toBe('v-a');
    expect(await cache.get('a')).toBe('v-a');
    expect(asked).toEqual(['a']);
    vi.setSystemTime(10_000 + 750);
    expect(await cache.get('a')).toBe('v-a');
    expect(asked).toEqual(['a', 'a']);
    await vi.advanceTimersByTimeAsync(0);
    vi.setSystemTime(10_000 + 750 + 1001);
    await cache.get('a');
    expect(asked).toHaveLength(3);
  });

  it('keeps refusals for the negative TTL, and never what was not to be cached', async () => {
    let outage = true;
    const { cache, asked } = scripted(() =>
      outage ? refused('key_revoked', false) : refused('key_revoked'),
    );
    await expect(cache.get('b')).rejects.toMatchObject({ code: 'key_revoked' });
    outage = false;
    await expect(cache.get('b')).rejects.toMatchObject({ code: 'key_revoked' });
    await expect(cache.get('b')).rejects.toMatchObject({ code: 'key_revoked' });
    expect(asked).toEqual(['b', 'b']);
    vi.setSystemTime(10_000 + 501);
    await expect(cache.get('b')).rejects.toThrow();
    expect(asked).toHaveLength(3);
  });

  it('asks once for concurrent gets, and evicts the oldest past its maximum', async () => {
    const { cache, asked } = scripted((id) => found(id));
    await Promise.all([cache.get('x'), cache.get('x'), cache.get('x')]);
    expect(asked).toEqual(['x']);
    await cache.get('y');
    await cache.get('z');
    expect(cache.size).toBe(2);
    await cache.get('x');
    expect(asked).toEqual(['x', 'y', 'z', 'x']);
  });

  it('forgets what matches, and does not cache an answer asked for before the forget', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const asked: string[] = [];
    const cache = new VerdictCache<string>(async (id) => {
      asked.push(id);
      if (id === 'slow') await gate;
      return id === 'p' ? refused('plan_inactive') : found(id);
    }, opts);
    await cache.get('k');
    await expect(cache.get('p')).rejects.toThrow();
    const slow = cache.get('slow');
    cache.forget(
      (v) => v === 'k',
      (e) => e.code === 'plan_inactive',
    );
    release();
    await slow;
    expect(cache.size).toBe(0);
    await cache.get('slow');
    expect(asked.filter((a) => a === 'slow')).toHaveLength(2);
  });
});

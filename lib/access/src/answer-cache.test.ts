import { HeraldError } from '@herald/proto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Answer, AnswerCache } from './answer-cache.js';

const OPTS = { ttlMs: 1000, maxEntries: 2, negativeTtlMs: 500, maxNegativeEntries: 2 };

/** An `ask` that answers from `answers` (a success with the id's value unless named) and counts. */
function asker(answers: Record<string, Answer<string> & { cache?: false }> = {}) {
  const asked: string[] = [];
  const ask = async (id: string) => {
    asked.push(id);
    return answers[id] ?? { ok: true as const, value: `value-${id}-${asked.length}` };
  };
  return { ask, asked };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('AnswerCache', () => {
  it('asks once for callers that come while the question is in flight, then reuses the answer', async () => {
    const { ask, asked } = asker();
    const cache = new AnswerCache(ask, OPTS);
    const [a, b] = await Promise.all([cache.get('x'), cache.get('x')]);
    expect(a).toEqual({ ok: true, value: 'value-x-1' });
    expect(b).toEqual(a);
    expect(await cache.get('x')).toEqual(a);
    expect(asked).toEqual(['x']);
  });

  it('refreshes a success in the background after 3/4 of its TTL and asks again after it', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { ask, asked } = asker();
    const cache = new AnswerCache(ask, OPTS);
    await cache.get('x');
    vi.setSystemTime(Date.now() + 749);
    expect(await cache.get('x')).toEqual({ ok: true, value: 'value-x-1' });
    expect(asked).toHaveLength(1);
    vi.setSystemTime(Date.now() + 1);
    // The cached answer still serves while the refresh runs.
    expect(await cache.get('x')).toEqual({ ok: true, value: 'value-x-1' });
    await Promise.resolve();
    expect(asked).toHaveLength(2);
    expect(await cache.get('x')).toEqual({ ok: true, value: 'value-x-2' });
  });

  it('caches a refusal for its own TTL, and never an answer marked cache: false', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const refused = { ok: false as const, error: new HeraldError('invalid_api_key', 'no') };
    const down = {
      ok: false as const,
      error: new HeraldError('unavailable', 'down'),
      cache: false as const,
    };
    const { ask, asked } = asker({ bad: refused, down });
    const cache = new AnswerCache(ask, OPTS);
    expect((await cache.get('bad')).ok).toBe(false);
    expect((await cache.get('bad')).ok).toBe(false);
    expect(asked).toEqual(['bad']);
    vi.setSystemTime(Date.now() + 500);
    await cache.get('bad');
    expect(asked).toEqual(['bad', 'bad']);
    await cache.get('down');
    await cache.get('down');
    expect(asked).toEqual(['bad', 'bad', 'down', 'down']);
    expect(cache.size).toBe(1);
  });

  it('evicts the oldest past maxEntries, successes and refusals counted apart', async () => {
    const refused = { ok: false as const, error: new HeraldError('invalid_api_key', 'no') };
    const { ask, asked } = asker({ r1: refused, r2: refused, r3: refused });
    const cache = new AnswerCache(ask, OPTS);
    for (const id of ['a', 'b', 'r1', 'r2', 'r3', 'c']) await cache.get(id);
    expect(cache.size).toBe(4);
    asked.length = 0;
    for (const id of ['b', 'c', 'r2', 'r3']) await cache.get(id);
    expect(asked).toEqual([]);
    await cache.get('a');
    await cache.get('r1');
    expect(asked).toEqual(['a', 'r1']);
  });

  it('drops what an invalidation names, and does not cache an answer asked for before it', async () => {
    const refused = { ok: false as const, error: new HeraldError('plan_inactive', 'lapsed') };
    const gate: { release?: () => void } = {};
    const asked: string[] = [];
    const cache = new AnswerCache<string>(
      async (id) => {
        asked.push(id);
        if (id === 'slow' && !gate.release)
          await new Promise<void>((r) => {
            gate.release = r;
          });
        return id === 'gone' ? refused : { ok: true, value: id };
      },
      { ...OPTS, maxEntries: 10 },
    );
    await cache.get('keep');
    await cache.get('drop');
    await cache.get('gone');
    const slow = cache.get('slow');
    await vi.waitFor(() => expect(gate.release).toBeDefined());
    cache.invalidate(
      (value) => value === 'drop',
      (error) => error.code === 'plan_inactive',
    );
    gate.release?.();
    expect(await slow).toEqual({ ok: true, value: 'slow' });
    asked.length = 0;
    for (const id of ['keep', 'drop', 'gone', 'slow']) await cache.get(id);
    expect(asked).toEqual(['drop', 'gone', 'slow']);
  });
});

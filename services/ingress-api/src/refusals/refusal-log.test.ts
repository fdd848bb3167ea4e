import { HeraldError, type RefusalBatch, RefusalBatch as RefusalBatchSchema } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { refusalLimits } from './refusal-env.js';
import { attributeRefusal, RefusalLog } from './refusal-log.js';

const A = '0a0a0a0a-0000-4000-8000-00000000000a';
const key = (n: number) => ({ id: `key-${n}`, account_id: A });
const refusal = { status: 403, code: 'rate_limited', field: null, origin: null, route: '/notify' };

function logOf(limits: Partial<{ keysMax: number; kindsPerKeyMax: number }> = {}) {
  const sent: RefusalBatch[] = [];
  let t = 1000;
  const log = new RefusalLog(
    (b) => sent.push(b),
    { flushMs: 60_000, keysMax: 2, kindsPerKeyMax: 2, ...limits },
    { now: () => t++ },
  );
  return { log, sent };
}

describe('RefusalLog', () => {
  it('collapses identical refusals of a key into one record with a count and first/last time', () => {
    const { log, sent } = logOf();
    for (let i = 0; i < 1000; i++) log.record(key(1), refusal);
    log.flush();
    expect(sent).toHaveLength(1);
    expect(sent[0]?.records).toEqual([{ ...refusal, count: 1000, first_at: 1000, last_at: 1999 }]);
    expect(RefusalBatchSchema.safeParse(sent[0]).success).toBe(true);
    // Nothing held: the next interval publishes nothing.
    log.flush();
    expect(sent).toHaveLength(1);
  });

  it('publishes one message per key per interval, each naming its key and account', () => {
    const { log, sent } = logOf();
    log.record(key(1), refusal);
    log.record(key(2), refusal);
    log.record(key(1), { ...refusal, code: 'origin_mismatch', origin: 'https://a.test' });
    log.flush();
    expect(sent.map((b) => [b.key_id, b.records.length])).toEqual([
      ['key-1', 2],
      ['key-2', 1],
    ]);
  });

  it('holds at most REFUSAL_KEYS_MAX keys per interval, counting the rest as dropped', () => {
    const { log, sent } = logOf({ keysMax: 2 });
    log.record(key(1), refusal);
    log.record(key(2), refusal);
    log.record(key(3), refusal);
    // A key already held still aggregates at the bound.
    log.record(key(2), refusal);
    log.stop();
    expect(sent.map((b) => b.key_id)).toEqual(['key-1', 'key-2']);
    expect(log.dropped).toBe(1);
  });

  it('holds at most REFUSAL_KINDS_PER_KEY_MAX kinds per key, counting the rest as dropped', () => {
    const { log, sent } = logOf({ kindsPerKeyMax: 2 });
    log.record(key(1), { ...refusal, field: 'a' });
    log.record(key(1), { ...refusal, field: 'b' });
    log.record(key(1), { ...refusal, field: 'c' });
    log.record(key(1), { ...refusal, field: 'a' });
    log.flush();
    expect(sent[0]?.records.map((r) => [r.field, r.count])).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
    expect(log.dropped).toBe(1);
  });

  it('cuts a long Origin and records only attributed refusals of status 400 and up but 500', () => {
    const { log, sent } = logOf();
    const long = `https://${'a'.repeat(500)}.test`;
    log.noteError(attributeRefusal(new HeraldError('origin_mismatch', 'no'), key(1)), {
      route: '/notify',
      origin: long,
    });
    log.noteError(new HeraldError('invalid_api_key', 'unknown key'), { route: '/notify' });
    log.noteError(attributeRefusal(new HeraldError('internal', 'bug'), key(2)), {
      route: '/notify',
    });
    log.noteError(attributeRefusal(new Error('not a refusal'), key(2)), { route: '/notify' });
    log.flush();
    expect(sent).toHaveLength(1);
    expect(sent[0]?.records[0]?.origin).toHaveLength(200);
    expect(RefusalBatchSchema.safeParse(sent[0]).success).toBe(true);
  });
});

describe('RefusalLog interval', () => {
  it('publishes on its own once REFUSAL_FLUSH_MS has passed since the first refusal', async () => {
    const sent: RefusalBatch[] = [];
    const log = new RefusalLog((b) => sent.push(b), {
      flushMs: 100,
      keysMax: 1,
      kindsPerKeyMax: 1,
    });
    log.record(key(1), refusal);
    log.record(key(1), refusal);
    const deadline = Date.now() + 5000;
    while (sent.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(sent.map((b) => b.records[0]?.count)).toEqual([2]);
    log.stop();
  });
});

describe('refusal settings', () => {
  const base = { TLS_DISABLED: 'true' };
  it('have the documented defaults', () => {
    expect(refusalLimits(loadConfig(base))).toEqual({
      flushMs: 2000,
      keysMax: 1000,
      kindsPerKeyMax: 20,
    });
  });

  it('take their edges and refuse beyond them, naming the setting', () => {
    const edges = {
      REFUSAL_FLUSH_MS: [100, 60_000],
      REFUSAL_KEYS_MAX: [1, 100_000],
      REFUSAL_KINDS_PER_KEY_MAX: [1, 200],
    };
    for (const [name, [lo, hi]] of Object.entries(edges) as [string, [number, number]][]) {
      expect(loadConfig({ ...base, [name]: String(lo) })).toMatchObject({ [name]: lo });
      expect(loadConfig({ ...base, [name]: String(hi) })).toMatchObject({ [name]: hi });
      expect(() => loadConfig({ ...base, [name]: String(lo - 1) })).toThrow(name);
      expect(() => loadConfig({ ...base, [name]: String(hi + 1) })).toThrow(name);
    }
  });
});

import { PushMessage } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { buildMessage, bytesOf, collapseKey, PLAINTEXT_MAX, thin } from './message.js';
import { classify, foldVerdicts } from './outcome.js';

const ev = (id: string, at: number, spec: Record<string, unknown> = {}) => ({
  id,
  at: new Date(at),
  spec: { after_ms: 0, ttl_s: 60, title: `t-${id}`, ...spec },
});

describe('push messages', () => {
  it('the collapse key is 32 base64url characters, the same per recipient, another per account', () => {
    const k = collapseKey('acct', 'alice');
    expect(k).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(collapseKey('acct', 'alice')).toBe(k);
    expect(collapseKey('other', 'alice')).not.toBe(k);
  });

  it("takes the newest event's content and lists every id newest first", () => {
    const m = buildMessage([ev('a', 1), ev('c', 3, { body: 'hi' }), ev('b', 2)], 'tag');
    expect(PushMessage.parse(m)).toEqual({
      v: 1,
      id: 'c',
      ids: ['c', 'b', 'a'],
      count: 3,
      title: 't-c',
      body: 'hi',
      tag: 'tag',
    });
  });

  it('fits 3,993 bytes: the payload goes first, then the body, then the oldest ids; count stays', () => {
    const big = JSON.stringify({ x: 'y'.repeat(3980) });
    const withPayload = buildMessage([ev('a', 1, { payload_json: big, body: 'b' })], 't');
    expect(withPayload.payload).toBeUndefined();
    expect(withPayload.body).toBe('b');
    const small = buildMessage([ev('a', 1, { payload_json: '{"k":1}' })], 't');
    expect(small.payload).toEqual({ k: 1 });
    expect(thin(small).payload).toBeUndefined();
    const many = Array.from({ length: 500 }, (_, i) =>
      ev(`event-${String(i).padStart(30, '0')}`, i),
    );
    const m = buildMessage(many, 't');
    expect(bytesOf(m)).toBeLessThanOrEqual(PLAINTEXT_MAX);
    expect(m.count).toBe(500);
    expect(m.ids[0]).toBe(m.id);
    expect(m.ids.length).toBeLessThan(500);
  });

  it('reads answers as RFC 8030 means them', () => {
    const r = (status: number | null, failure: 'refused' | 'timeout' | null = null) => ({
      status,
      failure,
      error: null,
      retryAfter: '3',
      latencyMs: 1,
    });
    expect(classify(r(201)).kind).toBe('success');
    expect(classify(r(202)).kind).toBe('success');
    expect(classify(r(410)).kind).toBe('gone');
    expect(classify(r(404)).kind).toBe('gone');
    expect(classify(r(413)).kind).toBe('too_large');
    expect(classify(r(429))).toMatchObject({ kind: 'retry', retryAfter: '3' });
    expect(classify(r(503)).kind).toBe('retry');
    expect(classify(r(null, 'timeout')).kind).toBe('retry');
    expect(classify(r(null, 'refused'))).toMatchObject({ kind: 'rejected', result: 'refused' });
    expect(classify(r(403))).toMatchObject({ kind: 'rejected', alarm: true });
    expect(classify(r(418))).toMatchObject({ kind: 'rejected', alarm: false });
  });
});

describe('a round folded into what is recorded', () => {
  const retry = (retryAfter?: string) => ({
    kind: 'retry' as const,
    result: 'retry' as const,
    retryAfter,
  });
  const ok = { kind: 'success' as const, result: 'success' as const };
  const now = 1_000_000;
  const live = [
    { id: 'a', expiresAt: new Date(now + 10_000) },
    { id: 'b', expiresAt: new Date(now + 500) },
  ];

  it('retries the events still owed, honouring the longest Retry-After, never past their TTL', () => {
    const r = foldVerdicts(
      [
        { sub: 's1', owed: [{ id: 'a' }, { id: 'b' }], v: ok },
        { sub: 's2', owed: [{ id: 'a' }, { id: 'b' }], v: retry('2') },
        { sub: 's3', owed: [{ id: 'a' }], v: retry('1') },
      ],
      ['a', 'b'],
      live,
      1,
      [300, 300],
      now,
    );
    expect(r.delivered).toEqual([{ subscription: 's1', events: ['a', 'b'] }]);
    // 2 s: `b` expires in 0.5 s, so only `a` waits; `b` is given up.
    expect(r.retry).toEqual({ events: ['a'], waitMs: 2000 });
    expect(r.exhausted).toBe(1);
  });

  it('gives up once the schedule ran out', () => {
    const r = foldVerdicts(
      [{ sub: 's', owed: [{ id: 'a' }], v: retry() }],
      ['a'],
      live,
      3,
      [300, 300],
      now,
    );
    expect(r.retry).toBeUndefined();
    expect(r.exhausted).toBe(1);
  });
});

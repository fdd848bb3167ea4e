import { describe, expect, it } from 'vitest';
import { decodeLiveBatch, encodeLiveBatch, type LiveBatchMeta } from './live-batch.js';

const R = '3f0e2b1a-9c8d-4e7f-a6b5-c4d3e2f1a0b9';
const utf8 = (s: string) => new TextEncoder().encode(s);

function meta(bytes: number[]): LiveBatchMeta {
  return {
    v: 1,
    reply_within_ms: 500,
    events: bytes.map((b, i) => ({ recipient: R, id: `id-${i}`, ts: 1, bytes: b })),
  };
}

describe('live batch messages', () => {
  it('round-trips the head and the payload bytes exactly, line feeds inside payloads included', () => {
    const payloads = [
      utf8('{"a":\n1}'),
      utf8(''),
      utf8('"héllo ✓"'),
      utf8('12345678901234567890123'),
    ];
    const m = meta(payloads.map((p) => p.byteLength));
    const decoded = decodeLiveBatch(encodeLiveBatch(m, payloads));
    expect(decoded.meta).toEqual(m);
    expect(decoded.payloads.map((p) => Buffer.from(p).toString())).toEqual(
      payloads.map((p) => Buffer.from(p).toString()),
    );
  });

  it.each([
    ['no line feed', utf8('{"v":1}'), 'no line feed'],
    ['a head that is not JSON', utf8('{nope\n'), 'not JSON'],
    ['a head of the wrong shape', utf8('{"v":2,"reply_within_ms":1,"events":[]}\n'), 'live batch'],
    ['payloads shorter than the head says', encodeLiveBatch(meta([5]), [utf8('abc')]), 'shorter'],
    ['bytes after the last payload', encodeLiveBatch(meta([1]), [utf8('abc')]), 'left after'],
  ])('refuses %s with a TypeError naming it', (_what, data, message) => {
    expect(() => decodeLiveBatch(data)).toThrow(TypeError);
    expect(() => decodeLiveBatch(data)).toThrow(message);
  });
});

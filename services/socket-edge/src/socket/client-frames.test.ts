import { describe, expect, it } from 'vitest';
import type { RawData } from 'ws';
import { readClientFrame } from './client-frames.js';

/** The acked id(s) of a client frame; undefined when it is no valid ack. */
function parseAck(data: RawData, isBinary: boolean): string | string[] | undefined {
  const frame = readClientFrame(data, isBinary);
  return frame?.type === 'ack' ? frame.ids : undefined;
}

describe('parseAck', () => {
  it('reads the id of an ack and rejects everything else', () => {
    expect(parseAck(Buffer.from('{"type":"ack","id":"abc"}'), false)).toBe('abc');
    expect(parseAck([Buffer.from('{"type":"ack",'), Buffer.from('"id":"abc"}')], false)).toBe(
      'abc',
    );
    expect(parseAck(Buffer.from('{"type":"ack","id":"abc"}'), true)).toBeUndefined();
    expect(parseAck(Buffer.from('nope'), false)).toBeUndefined();
    expect(parseAck(Buffer.from('{"type":"ack"}'), false)).toBeUndefined();
    expect(parseAck(Buffer.from(`{"type":"ack","id":"${'x'.repeat(65)}"}`), false)).toBeUndefined();
  });

  it("reads the SDK's canonical ack without JSON.parse, and leaves any other shape to it", () => {
    const ack = (id: string) => Buffer.from(`{"type":"ack","id":${JSON.stringify(id)}}`);
    expect(parseAck(ack('é'.repeat(64)), false)).toBe('é'.repeat(64));
    expect(parseAck(ack('é'.repeat(65)), false)).toBeUndefined();
    expect(parseAck(ack('a"b'), false)).toBe('a"b');
    expect(parseAck(ack('a\\b'), false)).toBe('a\\b');
    expect(parseAck(ack(''), false)).toBeUndefined();
    expect(parseAck(Buffer.from('{"type":"ack","id":"a\tb"}'), false)).toBeUndefined();
    expect(parseAck(Buffer.from('{"type":"ack","id":"x","more":1}'), false)).toBe('x');
    expect(parseAck(Buffer.from('{"type":"ack","id":"x"} '), false)).toBe('x');
    expect(parseAck(Buffer.from('{"type":"ack","id":"x"}}'), false)).toBeUndefined();
  });

  it('reads the ids of a list ack, canonical or not, within 1 to 128 ids of 1 to 64 characters', () => {
    const acks = (ids: string[]) => Buffer.from(JSON.stringify({ type: 'ack', ids }));
    const uuids = Array.from(
      { length: 128 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    );
    expect(parseAck(acks(['a']), false)).toEqual(['a']);
    expect(parseAck(acks(uuids), false)).toEqual(uuids);
    expect(parseAck(acks([...uuids, 'one-more']), false)).toBeUndefined();
    expect(parseAck(acks(['é'.repeat(64), 'b']), false)).toEqual(['é'.repeat(64), 'b']);
    expect(parseAck(acks(['x'.repeat(65)]), false)).toBeUndefined();
    expect(parseAck(acks(['a', '']), false)).toBeUndefined();
    expect(parseAck(acks(['', 'a']), false)).toBeUndefined();
    expect(parseAck(acks([]), false)).toBeUndefined();
    expect(parseAck(acks(['a"b', 'c\\d']), false)).toEqual(['a"b', 'c\\d']);
    expect(parseAck(Buffer.from('{"type":"ack","ids":["a", "b"]}'), false)).toEqual(['a', 'b']);
    expect(parseAck(Buffer.from('{ "ids":["a"],"type":"ack"}'), false)).toEqual(['a']);
    expect(parseAck(Buffer.from('{"type":"ack","ids":["a","b"]'), false)).toBeUndefined();
    expect(parseAck(Buffer.from('{"type":"ack","ids":["a",1]}'), false)).toBeUndefined();
    expect(parseAck(Buffer.from('{"type":"ack","ids":["a\tb"]}'), false)).toBeUndefined();
    expect(parseAck(Buffer.from('{"type":"ack","ids":"a"}'), false)).toBeUndefined();
    expect(parseAck([Buffer.from('{"type":"ack",'), Buffer.from('"ids":["a"]}')], false)).toEqual([
      'a',
    ]);
  });
});

describe('readClientFrame', () => {
  it('reads a token frame and an inbox request by their type, and nothing else', () => {
    const read = (text: string, isBinary = false) => readClientFrame(Buffer.from(text), isBinary);
    expect(read('{"type":"token","token":"a.b.c"}')).toEqual({ type: 'token', token: 'a.b.c' });
    expect(read('{"type":"token","token":""}')).toBeUndefined();
    expect(read('{"type":"token","token":"a.b.c"}', true)).toBeUndefined();
    expect(read('{"type":"read","all":true}')).toEqual({
      type: 'read',
      frame: { type: 'read', all: true },
    });
    // The inbox checks its requests itself, to name the field at fault in its error frame.
    expect(read('{"type":"history","limit":"x"}')).toEqual({
      type: 'history',
      frame: { type: 'history', limit: 'x' },
    });
    expect(read('{"type":"inbox","unread":1}')).toBeUndefined();
    expect(read('[{"type":"ack","id":"a"}]')).toBeUndefined();
    expect(read('"ack"')).toBeUndefined();
    expect(read('{"type":"ack","id":"a"')).toBeUndefined();
  });
});

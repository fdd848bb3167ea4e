import { encodeEventFrame } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { EventFrames, framingOf, parseAck, selectProtocol } from './framing.js';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('framingOf / selectProtocol', () => {
  it('picks herald.v1 only when offered', () => {
    expect(framingOf(undefined)).toBe('plain');
    expect(framingOf('chat, herald.v1')).toBe('herald.v1');
    expect(framingOf('herald.v2')).toBe('plain');
    expect(selectProtocol(new Set(['x', 'herald.v1']))).toBe('herald.v1');
    expect(selectProtocol(new Set(['x']))).toBe(false);
  });
});

describe('EventFrames', () => {
  it('sends plain payloads byte for byte and splices herald.v1 envelopes without parsing', () => {
    const payload = '{"big":12345678901234567890123,"k":"é"}';
    const frames = new EventFrames({ id: 'e1', ts: 42, data: bytes(payload) });
    const plain = frames.frameFor('plain');
    expect(plain.data.toString()).toBe(payload);
    expect(plain.bytes).toBe(Buffer.byteLength(payload));
    const v1 = frames.frameFor('herald.v1');
    expect(v1.data.toString()).toBe(`{"type":"event","id":"e1","ts":42,"payload":${payload}}`);
    expect(v1.bytes).toBe(Buffer.byteLength(v1.data));
    expect(frames.frameFor('herald.v1').data).toBe(v1.data);
  });

  it('gives the same bytes as the text envelope for any payload, valid UTF-8 or not', () => {
    const cases = [
      bytes('{"k":"\u2028 é 😀"}'),
      bytes('"x"'),
      Uint8Array.from([0xef, 0xbb, 0xbf, ...bytes('{"bom":1}')]),
      Uint8Array.from([0x22, 0xff, 0xfe, 0x22]),
      Uint8Array.from([0x22, 0xc3, 0x22]),
    ];
    for (const data of cases) {
      const id = 'id "quoted" é';
      const text = encodeEventFrame(id, 7, new TextDecoder().decode(data));
      const v1 = new EventFrames({ id, ts: 7, data }).frameFor('herald.v1');
      expect(Buffer.compare(v1.data as Buffer, Buffer.from(text))).toBe(0);
      expect(v1.bytes).toBe(Buffer.byteLength(text));
    }
  });

  it('keeps the envelope valid JSON for an empty payload', () => {
    const v1 = new EventFrames({ id: 'e2', ts: 1, data: new Uint8Array() }).frameFor('herald.v1');
    expect(JSON.parse(v1.data.toString())).toEqual({
      type: 'event',
      id: 'e2',
      ts: 1,
      payload: null,
    });
  });
});

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

import { encodeEventFrame } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { EventFrames, framingOf, selectProtocol } from './framing.js';

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

  it("puts a topic event's copy's topic on its herald.v1 envelope, both paths alike (issue 44)", () => {
    const payload = '{"a":1}';
    const v1 = new EventFrames({ id: 'e1', ts: 42, data: bytes(payload), topic: 'p:1' }).frameFor(
      'herald.v1',
    );
    expect(v1.data.toString()).toBe(encodeEventFrame('e1', 42, payload, 'p:1'));
    expect(JSON.parse(v1.data.toString())).toEqual({
      type: 'event',
      id: 'e1',
      ts: 42,
      topic: 'p:1',
      payload: { a: 1 },
    });
    const plain = new EventFrames({ id: 'e1', ts: 42, data: bytes(payload), topic: 'p:1' });
    expect(plain.frameFor('plain').data.toString()).toBe(payload);
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

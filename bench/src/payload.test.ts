import { describe, expect, it } from 'vitest';
import { MIN_PAYLOAD_BYTES, payloadMaker, SEQ_DIGITS, seqOf } from './payload.js';

describe('payloadMaker', () => {
  it('makes valid JSON of exactly the asked size, in bytes', () => {
    const p = payloadMaker(256);
    const text = p.make(42);
    expect(Buffer.byteLength(text)).toBe(256);
    expect(JSON.parse(text)).toMatchObject({ seq: '0000000042' });
  });

  it('carries the sequence number at a fixed offset, readable without parsing', () => {
    const p = payloadMaker(64);
    expect(seqOf(p.make(0))).toBe(0);
    expect(seqOf(p.make(10 ** SEQ_DIGITS - 1))).toBe(10 ** SEQ_DIGITS - 1);
    expect(seqOf('{"other":1}')).toBe(-1);
  });

  it('accepts the smallest size that holds a sequence number and refuses one byte less', () => {
    expect(Buffer.byteLength(payloadMaker(MIN_PAYLOAD_BYTES).make(1))).toBe(MIN_PAYLOAD_BYTES);
    expect(() => payloadMaker(MIN_PAYLOAD_BYTES - 1)).toThrow(`>= ${MIN_PAYLOAD_BYTES}`);
  });

  it('refuses a sequence number that does not fit its digits', () => {
    const p = payloadMaker(256);
    expect(() => p.make(10 ** SEQ_DIGITS)).toThrow(RangeError);
    expect(() => p.make(-1)).toThrow(RangeError);
    expect(() => p.make(1.5)).toThrow(RangeError);
  });
});

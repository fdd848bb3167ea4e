import { describe, expect, it } from 'vitest';
import { type Span, scanJson } from './raw-json.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The span (in bytes) of the member `name` of the top-level object `text`, as accept finds it. */
function spanOf(text: string, name: string): { bytes: Uint8Array; span: Span | undefined } {
  const bytes = encoder.encode(text);
  const scanned = scanJson(bytes);
  if (scanned.kind !== 'object') throw new SyntaxError(`expected an object, found ${scanned.kind}`);
  return { bytes, span: scanned.members.get(name) };
}

/** The payload's original text, or undefined when the object has none. */
function payloadOf(text: string): string | undefined {
  const { bytes, span } = spanOf(text, 'payload');
  return span && decoder.decode(bytes.subarray(span.start, span.end));
}

describe("scanJson: a member's original text", () => {
  it('returns scalars as written', () => {
    expect(payloadOf('{"payload":1}')).toBe('1');
    expect(payloadOf('{"payload":-0.5e+10}')).toBe('-0.5e+10');
    expect(payloadOf('{"payload":true}')).toBe('true');
    expect(payloadOf('{"payload":false}')).toBe('false');
    expect(payloadOf('{"payload":null}')).toBe('null');
    expect(payloadOf('{"payload":"hi"}')).toBe('"hi"');
  });

  it('keeps numbers beyond 2^53 digit for digit', () => {
    const text =
      '{"recipient":"x","payload":{"n":123456789012345678901234567890,"f":0.10000000000000000000001}}';
    expect(payloadOf(text)).toBe(
      '{"n":123456789012345678901234567890,"f":0.10000000000000000000001}',
    );
  });

  it('returns nested objects and arrays with their inner formatting', () => {
    const inner = '{ "a" : [1, {"b": [ [], {} ]}, "c"],\n\t"d": {"e": {"f": null}} }';
    expect(payloadOf(`{"payload": ${inner}, "client": "web"}`)).toBe(inner);
    expect(payloadOf('{"payload":[1,[2,[3,[4]]],{"x":[]}]}')).toBe('[1,[2,[3,[4]]],{"x":[]}]');
  });

  it('handles strings with escapes, brackets and quotes inside', () => {
    const inner = '{"s":"a \\"quoted\\" }{ ][ \\\\","t":"\\\\","u":"\\/\\b\\f\\n\\r\\t"}';
    expect(payloadOf(`{"payload":${inner}}`)).toBe(inner);
    expect(payloadOf('{"payload":"ends with backslash \\\\"}')).toBe('"ends with backslash \\\\"');
  });

  it('keeps unicode, raw and escaped, untouched', () => {
    const inner = '{"emoji":"🎉 ünïcødé 中文","esc":"\\u00e9\\ud83c\\udf89"}';
    expect(payloadOf(`{"payload":${inner}}`)).toBe(inner);
  });

  it('skips other members whose strings contain "payload"', () => {
    const text =
      '{"api_key":"\\"payload\\":1","note":{"payload":"not me"},"payload":"me","x":["payload"]}';
    expect(payloadOf(text)).toBe('"me"');
  });

  it('does not match a key that merely contains the name', () => {
    expect(payloadOf('{"payloads":1,"my_payload":2}')).toBeUndefined();
    expect(payloadOf('{"payload":{"payload":1}}')).toBe('{"payload":1}');
  });

  it('tolerates whitespace everywhere JSON allows it', () => {
    const text =
      ' \n\t{ \r\n "recipient" :\t"r" ,\n  "payload"   :   [ 1 , 2 ]  \n , "client" : "web" } \n';
    expect(payloadOf(text)).toBe('[ 1 , 2 ]');
    expect(payloadOf('{"payload" : 42 }')).toBe('42');
  });

  it('matches an escaped key name', () => {
    expect(payloadOf('{"pay\\u006coad":{"a":1}}')).toBe('{"a":1}');
    expect(payloadOf('{"\\u0070ayload":7}')).toBe('7');
  });

  it('takes the last of duplicate keys, as JSON.parse does', () => {
    const text = '{"payload":1,"payload":{"second":true}}';
    expect(payloadOf(text)).toBe('{"second":true}');
    expect(JSON.parse(text).payload).toEqual({ second: true });
  });

  it('returns undefined when absent, and for an empty object', () => {
    expect(payloadOf('{"recipient":"r"}')).toBeUndefined();
    expect(payloadOf('{}')).toBeUndefined();
    expect(payloadOf(' { } ')).toBeUndefined();
  });

  it('gives spans that index the original bytes', () => {
    const text = '{"a":1, "payload" : "x"}';
    expect(spanOf(text, 'payload').span).toEqual({ start: 20, end: 23 });
    expect(spanOf(text, 'a').span).toEqual({ start: 5, end: 6 });
    // Past multi-byte characters, spans count bytes (the payload is a view of the body's bytes).
    expect(spanOf('{"é":1,"payload":2}', 'payload').span).toEqual({ start: 18, end: 19 });
  });

  it('round-trips through JSON.parse for every value shape', () => {
    const values = [
      0,
      -1.5,
      'str',
      true,
      null,
      [],
      {},
      [1, 'two', { three: [3] }],
      { k: { k: { k: 'v' } } },
    ];
    for (const value of values) {
      const text = JSON.stringify({ recipient: 'r', payload: value, client: 'web' }, null, 2);
      expect(JSON.parse(payloadOf(text) as string)).toEqual(value);
    }
  });

  it('throws a SyntaxError on malformed input rather than guessing', () => {
    for (const bad of [
      '',
      '[1]',
      '"payload"',
      '{"payload":1',
      '{"payload" 1}',
      '{"payload":}',
      '{"payload":"x}',
      '{"a":1} x',
      '{"payload":[1,2}',
    ]) {
      expect(() => payloadOf(bad), bad).toThrow(SyntaxError);
    }
  });

  it('rejects raw control characters inside strings', () => {
    expect(() => payloadOf('{"payload":"a\nb"}')).toThrow(SyntaxError);
  });
});

import { HeraldError } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { type Accepted, accept } from './accept.js';
import { scanJson } from './raw-json.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (b: Uint8Array) => new TextDecoder().decode(b);
const recipient = '6f1c1b1e-3f0a-4c5e-9a7b-2d3c4e5f6a7b';
const limits = { payloadLimitBytes: 1024 };

function refusal(fn: () => unknown): { code: string; field: string | undefined } {
  try {
    fn();
  } catch (err) {
    if (err instanceof HeraldError) return { code: err.code, field: err.field };
    throw err;
  }
  throw new Error('accepted');
}

describe('accept', () => {
  it('carries the payload as the exact bytes sent, a view into the body', () => {
    const payload = '{ "n": 123456789012345678901234567890, "z": 1, "a": "ünï" }';
    const body = bytes(
      `{"recipient":"${recipient.toUpperCase()}","payload":${payload},"api_key":"hk_test_k","client":"web"}`,
    );
    const accepted = accept({ body }, limits) as Accepted;
    expect(text(accepted.payload)).toBe(payload);
    expect(accepted.payload.buffer).toBe(body.buffer);
    expect(accepted.request).toEqual({ recipient, api_key: 'hk_test_k', client: 'web' });
    expect(accepted.idempotencyKey).toBeUndefined();
  });

  it('refuses in a fixed order: UTF-8, JSON, object, fields, payload size, Idempotency-Key', () => {
    const ok = { recipient, payload: 1, api_key: 'hk_test_k', client: 'web' };
    expect(refusal(() => accept({ body: new Uint8Array([0x7b, 0xff, 0x7d]) }, limits))).toEqual({
      code: 'invalid_json',
      field: 'body',
    });
    expect(refusal(() => accept({ body: bytes('{"payload":[1,}') }, limits)).code).toBe(
      'invalid_json',
    );
    expect(refusal(() => accept({ body: bytes('[1]') }, limits)).code).toBe('invalid_json');
    expect(refusal(() => accept({ body: bytes('{"payload":1}') }, limits))).toEqual({
      code: 'missing_field',
      field: 'recipient',
    });
    const big = JSON.stringify({ ...ok, payload: 'x'.repeat(2000) });
    expect(
      refusal(() => accept({ body: bytes(big), idempotencyKey: 'has space' }, limits)),
    ).toEqual({ code: 'payload_too_large', field: 'payload' });
    expect(
      refusal(() =>
        accept({ body: bytes(JSON.stringify(ok)), idempotencyKey: 'has space' }, limits),
      ),
    ).toEqual({ code: 'invalid_field', field: 'Idempotency-Key' });
  });
});

describe('scanJson', () => {
  it('refuses exactly what JSON.parse refuses, nested in the payload too', () => {
    const cases = [
      '{"payload":{"a":}}',
      '{"payload":[1,]}',
      '{"payload":{"a":1,}}',
      '{"payload":01}',
      '{"payload":1.}',
      '{"payload":-}',
      '{"payload":tru}',
      '{"payload":"\\x"}',
      '{"payload":"\\u12g4"}',
      '{"payload":[{"a":[1 2]}]}',
      '{"payload":{"a" 1}}',
      '{"payload":{1:2}}',
      '{"payload":1}}',
      '{"payload":[1]]}',
    ];
    for (const bad of cases) {
      expect(() => JSON.parse(bad), bad).toThrow(SyntaxError);
      expect(() => scanJson(bytes(bad)), bad).toThrow(SyntaxError);
    }
    for (const good of [
      '{"payload":{"a":[1,{"b":[]},-0.5e-3,"\\u00e9",true,null,false]}}',
      '"s"',
    ]) {
      expect(() => JSON.parse(good), good).not.toThrow();
      expect(() => scanJson(bytes(good)), good).not.toThrow();
    }
  });

  it('walks deep nesting without overflowing the call stack', () => {
    const deep = `{"payload":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const scanned = scanJson(bytes(deep));
    expect(scanned.kind).toBe('object');
  });
});

describe('accept: the push field (issue 40)', () => {
  const body = (push: unknown) =>
    bytes(JSON.stringify({ recipient, payload: 1, api_key: 'hk_test_k', client: 'web', push }));
  const refused = (push: unknown) => refusal(() => accept({ body: body(push) }, limits));

  it('is undefined without one, and the validated content with one', () => {
    const plain = bytes(
      JSON.stringify({ recipient, payload: 1, api_key: 'hk_test_k', client: 'web' }),
    );
    expect((accept({ body: plain }, limits) as Accepted).push).toBeUndefined();
    const push = { title: 't'.repeat(200), body: 'b', url: 'https://x.example/a', icon: '/i.png' };
    expect((accept({ body: body(push) }, limits) as Accepted).push).toEqual(push);
  });

  it('refuses a bad one naming the member at fault', () => {
    expect(refused({ title: 't'.repeat(201) })).toEqual({
      code: 'invalid_field',
      field: 'push.title',
    });
    expect(refused({ title: '' })).toEqual({ code: 'invalid_field', field: 'push.title' });
    expect(refused({ body: 'no title' })).toEqual({ code: 'invalid_field', field: 'push.title' });
    expect(refused({ title: 't', body: 7 })).toEqual({ code: 'invalid_field', field: 'push.body' });
    expect(refused({ title: 't', url: 'javascript:alert(1)' })).toEqual({
      code: 'invalid_field',
      field: 'push.url',
    });
    expect(refused({ title: 't', icon: 'ftp://x' })).toEqual({
      code: 'invalid_field',
      field: 'push.icon',
    });
    expect(refused({ title: 't', badge: 'x' })).toEqual({ code: 'invalid_field', field: 'push' });
    expect(refused('Order 7')).toEqual({ code: 'invalid_field', field: 'push' });
    expect(refused(null)).toEqual({ code: 'invalid_field', field: 'push' });
  });
});

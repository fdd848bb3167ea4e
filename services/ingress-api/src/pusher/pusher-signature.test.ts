import { createRequire } from 'node:module';
import { bodyMd5, requestSignature } from '@herald/access';
import { HeraldError } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { checkSignature, queryParams } from './pusher-signature.js';

// The stock `pusher` library's own signer (5.3.4): what its trigger() sends, the oracle.
const require = createRequire(import.meta.url);
const { createSignedQueryString } = require('pusher/lib/requests') as {
  createSignedQueryString(
    token: unknown,
    request: { method: string; path: string; body?: string; params?: Record<string, string> },
  ): string;
};
const Token = require('pusher/lib/token') as new (key: string, secret: string) => unknown;

const APP = { key: '0123456789abcdef0123', secret: 'f'.repeat(40) };
const PATH = '/apps/1234567890/events';
const BODY = JSON.stringify({ name: 'greet', data: '{"hi":1}', channels: ['news'] });
const enc = (s: string) => new TextEncoder().encode(s);

/** What the library signs for this body now, as the server receives it. */
function signed(body: string | undefined = BODY, path = PATH) {
  const qs = createSignedQueryString(new Token(APP.key, APP.secret), {
    method: 'POST',
    path,
    ...(body === undefined ? {} : { body }),
  });
  return { method: 'POST', path, params: queryParams(qs), body: enc(body ?? '') };
}

const nowS = () => Date.now() / 1000;

function refusal(fn: () => void): HeraldError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HeraldError);
    return err as HeraldError;
  }
  throw new Error('expected a refusal');
}

describe('checkSignature against the pusher library', () => {
  it("accepts the library's signed POST, with and without a body", () => {
    expect(() => checkSignature(signed(), APP, nowS(), 600)).not.toThrow();
    const terminate = signed('{}', '/apps/1234567890/users/42/terminate_connections');
    expect(() => checkSignature(terminate, APP, nowS(), 600)).not.toThrow();
    expect(() => checkSignature(signed(undefined), APP, nowS(), 600)).not.toThrow();
  });

  it('refuses a body changed after signing (body_md5), naming body_md5', () => {
    const req = { ...signed(), body: enc(BODY.replace('news', 'newz')) };
    const err = refusal(() => checkSignature(req, APP, nowS(), 600));
    expect(err.status).toBe(401);
    expect(err.field).toBe('body_md5');
    expect(err.message).toMatch(/^Invalid body_md5/);
  });

  it('refuses a body changed with body_md5 recomputed: the signature no longer matches', () => {
    const tampered = BODY.replace('news', 'newz');
    const req = signed();
    req.params.body_md5 = bodyMd5(tampered);
    const err = refusal(() => checkSignature({ ...req, body: enc(tampered) }, APP, nowS(), 600));
    expect(err.field).toBe('auth_signature');
    expect(err.message).toContain('Invalid signature: you should have sent HmacSHA256Hex("POST\\n');
    expect(err.message).not.toContain(APP.secret);
  });

  it('refuses a body without body_md5, and another secret or key', () => {
    const req = signed();
    delete req.params.body_md5;
    expect(refusal(() => checkSignature(req, APP, nowS(), 600)).field).toBe('body_md5');
    const other = { ...APP, secret: 'e'.repeat(40) };
    expect(refusal(() => checkSignature(signed(), other, nowS(), 600)).field).toBe(
      'auth_signature',
    );
    const otherKey = { ...APP, key: 'abcdefabcdefabcdefab' };
    expect(refusal(() => checkSignature(signed(), otherKey, nowS(), 600)).field).toBe('auth_key');
  });

  it('takes a timestamp exactly at the skew either way, refuses one second past it', () => {
    for (const [offset, ok] of [
      [600, true],
      [-600, true],
      [601, false],
      [-601, false],
    ] as const) {
      const ts = Math.floor(nowS()) - offset;
      const params: Record<string, string> = {
        auth_key: APP.key,
        auth_timestamp: String(ts),
        auth_version: '1.0',
        body_md5: bodyMd5(BODY),
      };
      params.auth_signature = requestSignature(APP.secret, 'POST', PATH, params);
      const req = { method: 'POST', path: PATH, params, body: enc(BODY) };
      const check = () => checkSignature(req, APP, ts + offset, 600);
      if (ok) expect(check).not.toThrow();
      else {
        const err = refusal(check);
        expect(err.field).toBe('auth_timestamp');
        expect(err.message).toMatch(/^Timestamp expired/);
      }
    }
  });

  it('refuses a missing or other auth_version, a malformed timestamp, a missing signature', () => {
    const cases: Array<[string, string | undefined, string]> = [
      ['auth_version', '2.0', 'auth_version'],
      ['auth_version', undefined, 'auth_version'],
      ['auth_timestamp', 'soon', 'auth_timestamp'],
      ['auth_signature', undefined, 'auth_signature'],
      ['auth_key', undefined, 'auth_key'],
    ];
    for (const [name, value, field] of cases) {
      const req = signed();
      if (value === undefined) delete req.params[name];
      else req.params[name] = value;
      expect(refusal(() => checkSignature(req, APP, nowS(), 600)).field).toBe(field);
    }
  });

  it('refuses a query parameter given twice', () => {
    expect(refusal(() => queryParams('auth_key=a&auth_key=b')).field).toBe('auth_key');
  });

  it('parses a query as URLSearchParams does, with or without escapes', () => {
    for (const raw of [
      'auth_key=k&auth_timestamp=1&body_md5=ab',
      'a=b=c&&d&e=',
      'name=a%20b&x=1+2&y=%zz',
      '',
    ]) {
      expect(queryParams(raw)).toEqual(Object.fromEntries(new URLSearchParams(raw)));
    }
    expect(refusal(() => queryParams('x=1&x=1%20')).field).toBe('x');
  });

  it('takes the signature in upper-case hex, refuses it or body_md5 cut short or not hex', () => {
    const req = signed();
    const upper = { ...req, params: { ...req.params } };
    upper.params.auth_signature = String(req.params.auth_signature).toUpperCase();
    expect(() => checkSignature(upper, APP, nowS(), 600)).not.toThrow();
    for (const [name, mangle] of [
      ['auth_signature', (v: string) => v.slice(0, -2)],
      ['auth_signature', (v: string) => `${v.slice(0, -1)}g`],
      ['body_md5', (v: string) => `${v.slice(0, -1)}z`],
    ] as const) {
      const bad = { ...req, params: { ...req.params } };
      bad.params[name] = mangle(String(req.params[name]));
      expect(refusal(() => checkSignature(bad, APP, nowS(), 600)).field).toBe(name);
    }
  });
});

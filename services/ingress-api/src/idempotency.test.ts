import { HeraldError } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { fingerprintOf, validateIdempotencyKey } from './idempotency.js';

describe('validateIdempotencyKey', () => {
  it('accepts 1 to 255 visible ASCII characters, and an absent header', () => {
    expect(validateIdempotencyKey(undefined)).toBeUndefined();
    expect(validateIdempotencyKey('a')).toBe('a');
    expect(validateIdempotencyKey('k'.repeat(255))).toBe('k'.repeat(255));
    expect(validateIdempotencyKey('!~order:42/retry#1')).toBe('!~order:42/retry#1');
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a space', 'a b'],
    ['a tab', 'a\tb'],
    ['DEL', 'a\x7fb'],
    ['non-ASCII', 'ordre-é'],
  ])('refuses %s with invalid_field naming the header', (_name, value) => {
    try {
      validateIdempotencyKey(value);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(HeraldError);
      expect((err as HeraldError).toBody().error).toMatchObject({
        code: 'invalid_field',
        field: 'Idempotency-Key',
      });
    }
  });
});

describe('fingerprintOf', () => {
  const bytes = (s: string) => new TextEncoder().encode(s);
  const base = {
    recipient: '3b241101-e2bb-4255-8caf-4136c566a962',
    client: 'web',
    payload: bytes('{"a":1}'),
  };

  it('is the same for the same request and differs when recipient, client or payload does', () => {
    expect(fingerprintOf({ ...base, payload: bytes('{"a":1}') })).toBe(fingerprintOf(base));
    expect(fingerprintOf({ ...base, payload: bytes('{"a":2}') })).not.toBe(fingerprintOf(base));
    expect(fingerprintOf({ ...base, client: 'mobile' })).not.toBe(fingerprintOf(base));
    // The push field (issue 40): absent digests as before; present, it is part of the request.
    expect(fingerprintOf({ ...base, push: undefined })).toBe(fingerprintOf(base));
    expect(fingerprintOf({ ...base, push: { title: 'a' } })).not.toBe(fingerprintOf(base));
    expect(fingerprintOf({ ...base, push: { title: 'a' } })).not.toBe(
      fingerprintOf({ ...base, push: { title: 'b' } }),
    );
    expect(fingerprintOf({ ...base, recipient: '3b241101-e2bb-4255-8caf-4136c566a963' })).not.toBe(
      fingerprintOf(base),
    );
  });
});

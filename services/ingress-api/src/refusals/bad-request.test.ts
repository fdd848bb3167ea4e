import { HeraldError, type VerifiedKey } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { createBadRequestAttribution } from './bad-request.js';
import { refusedKeyOf } from './refusal-log.js';

const KEY = `hk_test_${'a'.repeat(43)}`;
const verified = { id: 'key-1', account_id: 'acc-1' } as VerifiedKey;
const body = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

describe('a bad request attributed to the key its body names', () => {
  const asked: string[] = [];
  const attribute = createBadRequestAttribution({
    verify: async (key) => {
      asked.push(key);
      if (key === KEY) return verified;
      throw new HeraldError('invalid_api_key', 'unknown');
    },
  });
  const bad = () => new HeraldError('invalid_field', 'recipient: bad', { field: 'recipient' });

  it('attributes a 400 whose body names a key that verifies', async () => {
    const err = bad();
    await attribute(err, body({ api_key: KEY, recipient: 1 }));
    expect(refusedKeyOf(err)).toBe(verified);
  });

  it('leaves it unattributed for an unknown key, a malformed one, no JSON, or not a 400', async () => {
    asked.length = 0;
    const unknown = bad();
    await attribute(unknown, body({ api_key: `hk_test_${'b'.repeat(43)}` }));
    expect(refusedKeyOf(unknown)).toBeUndefined();
    const malformed = bad();
    await attribute(malformed, body({ api_key: 'not-a-key' }));
    const notJson = bad();
    await attribute(notJson, new TextEncoder().encode('{"api_key":'));
    const notBad = new HeraldError('origin_mismatch', 'no');
    await attribute(notBad, body({ api_key: KEY }));
    for (const err of [malformed, notJson, notBad]) expect(refusedKeyOf(err)).toBeUndefined();
    // Only the well-formed key was looked up; the others cost no verification.
    expect(asked).toEqual([`hk_test_${'b'.repeat(43)}`]);
  });

  it('does not hold the 400 for a verification while NATS is down, nor past its bound', async () => {
    let verifications = 0;
    const down = createBadRequestAttribution(
      {
        verify: async () => {
          verifications++;
          return verified;
        },
      },
      () => true,
    );
    const whileDown = bad();
    await down(whileDown, body({ api_key: KEY }));
    expect(refusedKeyOf(whileDown)).toBeUndefined();
    expect(verifications).toBe(0);

    // A verification that never answers: the 400 still goes (after the bound), unattributed;
    // without the bound this would hang until the test's timeout.
    const hung = createBadRequestAttribution({ verify: () => new Promise<VerifiedKey>(() => {}) });
    const slow = bad();
    await hung(slow, body({ api_key: KEY }));
    expect(refusedKeyOf(slow)).toBeUndefined();
  });
});

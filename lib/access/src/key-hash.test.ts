import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { digestsEqual, hashKey } from './key-hash.js';

describe('hashKey', () => {
  it('is the hex SHA-256 of the key (the FIPS 180-2 "abc" vector)', () => {
    expect(hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('hashes the key as UTF-8, the same bytes as a streaming Hash', () => {
    for (const key of ['hk_live_Aa0-_', 'clé-ünïcode-🔑', '']) {
      expect(hashKey(key)).toBe(createHash('sha256').update(key, 'utf8').digest('hex'));
      expect(digestsEqual(hashKey(key), hashKey(key))).toBe(true);
    }
  });
});

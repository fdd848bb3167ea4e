import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox, SecretEncryptionKey } from './secret-box.js';

describe('SecretBox: secrets sealed at rest', () => {
  const box = new SecretBox(randomBytes(32));

  it('opens what it sealed, for the same key row only', () => {
    const sealed = box.seal('hk_sign_secret', 'row-1');
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain('secret');
    expect(box.open(sealed, 'row-1')).toBe('hk_sign_secret');
    // Two seals of one secret differ (a fresh IV each time).
    expect(box.seal('hk_sign_secret', 'row-1')).not.toBe(sealed);
    expect(() => box.open(sealed, 'row-2')).toThrow();
  });

  it('does not open under another key, nor a tampered value', () => {
    const sealed = box.seal('hk_sign_secret', 'row-1');
    expect(() => new SecretBox(randomBytes(32)).open(sealed, 'row-1')).toThrow();
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3] ?? '', 'base64url');
    body[0] = (body[0] ?? 0) ^ 1;
    parts[3] = body.toString('base64url');
    expect(() => box.open(parts.join('.'), 'row-1')).toThrow();
    expect(() => box.open('plain text', 'row-1')).toThrow(/not a sealed secret/);
  });

  it('an encryption key setting must be the base64 of exactly 32 bytes, and says how to make one', () => {
    expect(SecretEncryptionKey.parse(randomBytes(32).toString('base64'))).toHaveLength(32);
    for (const bad of [
      randomBytes(31).toString('base64'),
      randomBytes(33).toString('base64'),
      'not base64!',
    ]) {
      const parsed = SecretEncryptionKey.safeParse(bad);
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.message).toMatch(/openssl rand -base64 32/);
    }
  });
});

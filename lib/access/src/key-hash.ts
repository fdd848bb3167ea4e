import { hash, timingSafeEqual } from 'node:crypto';

/**
 * SHA-256 of an API key, hex. Keys carry 190+ bits of randomness, so a fast hash is enough at
 * rest (there is nothing to brute-force), and it lets callers send the hash, not the key, to auth.
 */
export function hashKey(apiKey: string): string {
  // One-shot (node >= 20.12): every dispatch hashes its key for the verifier's cache, and
  // createHash's Hash object cost more than the digest itself (same bytes out).
  return hash('sha256', apiKey, 'hex');
}

/** Constant-time equality of two hex digests (false when lengths differ). */
export function digestsEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ba.length === bb.length && ba.length > 0 && timingSafeEqual(ba, bb);
}

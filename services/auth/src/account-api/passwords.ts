import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

/** The account API's password rule (issue 3): at least 12 characters. */
export const MIN_PASSWORD_LENGTH = 12;
/** Bounds the work one request can ask of scrypt; no passphrase needs more. */
export const MAX_PASSWORD_LENGTH = 256;
/** scrypt's block size and parallelism: the values its authors recommend for interactive logins. */
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const SALT_BYTES = 16;
const HASH_BYTES = 32;

/**
 * Hashes a password with scrypt (node:crypto, on the libuv thread pool so the event loop keeps
 * serving) and a fresh random salt. The result carries its parameters,
 * `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>` (base64url), so the cost can be raised later without
 * invalidating stored hashes.
 */
export async function hashPassword(password: string, logN: number): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, logN, BLOCK_SIZE, PARALLELISM, HASH_BYTES);
  return [
    'scrypt',
    logN,
    BLOCK_SIZE,
    PARALLELISM,
    salt.toString('base64url'),
    hash.toString('base64url'),
  ].join('$');
}

/**
 * True when `password` matches `stored`, compared in constant time. A malformed stored value is
 * a mismatch, never an exception a caller could tell apart by timing or status.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [logN, r, p] = parts.slice(1, 4).map(Number);
  const salt = Buffer.from(parts[4] ?? '', 'base64url');
  const expected = Buffer.from(parts[5] ?? '', 'base64url');
  if (!isInt(logN, 10, 20) || !isInt(r, 1, 32) || !isInt(p, 1, 16) || expected.length === 0) {
    return false;
  }
  const actual = await derive(password, salt, logN, r, p, expected.length);
  return timingSafeEqual(actual, expected);
}

function derive(
  password: string,
  salt: Buffer,
  logN: number,
  r: number,
  p: number,
  length: number,
): Promise<Buffer> {
  const N = 2 ** logN;
  // scrypt needs 128·N·r bytes; node refuses above maxmem (32 MiB by default), so leave room.
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, length, options, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

function isInt(n: number | undefined, min: number, max: number): n is number {
  return n !== undefined && Number.isInteger(n) && n >= min && n <= max;
}

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { HeraldError } from '@herald/proto';
import { z } from 'zod';
import { generateSigningSecret } from './key-spec.js';

/*
 * A key's signing secret must verify HMACs, so unlike a key it cannot be stored as a hash. It is
 * sealed with AES-256-GCM under SECRET_ENCRYPTION_KEY, a key only auth and the admin CLI hold (from
 * config, never in the database), and bound to its key row by the associated data, so a sealed
 * secret copied onto another row does not open. A database dump alone yields no secret.
 */

/** SECRET_ENCRYPTION_KEY: the base64 of exactly 32 random bytes (`openssl rand -base64 32`). */
export const SecretEncryptionKey = z
  .string()
  .trim()
  .transform((value, ctx) => {
    const bytes = Buffer.from(value, 'base64');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value) || bytes.length !== 32) {
      ctx.addIssue({
        code: 'custom',
        message:
          'must be the base64 of 32 random bytes: generate one with `openssl rand -base64 32`',
      });
      return z.NEVER;
    }
    return bytes;
  });

const VERSION = 'v1';
const IV_BYTES = 12;

/** Seals and opens signing secrets with one 32-byte key. */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
    this.#key = key;
  }

  /** `v1.<iv>.<tag>.<ciphertext>` (base64url), bound to `context` (the key row's id). */
  seal(plain: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), body].map(encode).join('.');
  }

  /** The secret a {@link seal} made for the same context; throws when it does not open. */
  open(sealed: string, context: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || body === undefined) {
      throw new Error('not a sealed signing secret');
    }
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([
      decipher.update(Buffer.from(body, 'base64url')),
      decipher.final(),
    ]).toString('utf8');
  }
}

function encode(part: string | Buffer): string {
  return typeof part === 'string' ? part : part.toString('base64url');
}

export const NO_BOX =
  'this Herald has no SECRET_ENCRYPTION_KEY, which seals signing secrets at rest: the operator sets it on auth and the admin CLI (the base64 of 32 random bytes, `openssl rand -base64 32`)';

/** The sealed context of a key row: a sealed secret opens only on the row it was made for. */
export function sealContext(keyId: string): string {
  return `api_keys.signing_secret:${keyId}`;
}

/** A new secret for key `keyId`, in clear (shown once) and sealed (stored). */
export function newSigningSecret(
  box: SecretBox | undefined,
  keyId: string,
): { plain: string; sealed: string } {
  if (!box)
    throw new HeraldError('invalid_field', `require_token: ${NO_BOX}`, { field: 'require_token' });
  const plain = generateSigningSecret();
  return { plain, sealed: box.seal(plain, sealContext(keyId)) };
}

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { z } from 'zod';

/*
 * A secret that must verify or make HMACs (a key's signing secret, a webhook endpoint's secret)
 * cannot be stored as a hash. It is sealed with AES-256-GCM under a key only the services that use
 * it hold (from config, never in the database), and bound to its row by the associated data, so a
 * sealed secret copied onto another row does not open. A database dump alone yields no secret.
 */

/** An encryption key setting: the base64 of exactly 32 random bytes (`openssl rand -base64 32`). */
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

/** Seals and opens secrets with one 32-byte key. */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
    this.#key = key;
  }

  /** `v1.<iv>.<tag>.<ciphertext>` (base64url), bound to `context` (its row, e.g. the row's id). */
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
      throw new Error('not a sealed secret');
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

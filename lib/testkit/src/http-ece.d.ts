/** The slice of http_ece 1.2 (RFC 8188) the test push service uses; the package has no types. */
declare module 'http_ece' {
  import type { ECDH } from 'node:crypto';

  export interface EceParams {
    version: 'aes128gcm' | 'aesgcm' | 'aesgcm128';
    /** The receiver's key pair (Web Push: the user agent's). */
    privateKey?: ECDH;
    /** The sender's public key, where the header does not carry it (aesgcm). */
    dh?: string | Buffer;
    authSecret?: string | Buffer;
    salt?: string | Buffer;
    rs?: number;
  }
  export function decrypt(buffer: Buffer, params: EceParams): Buffer;
  export function encrypt(buffer: Buffer, params: EceParams): Buffer;
  const ece: { decrypt: typeof decrypt; encrypt: typeof encrypt };
  export default ece;
}

import { randomBytes } from 'node:crypto';
import { fromPublic, type KeyPair } from 'nkeys.js';

/**
 * NATS's JWTs (nats-io/jwt): a JSON header and claims, base64url without padding, signed with an
 * ed25519 nkey over `header.claims`. Only what the auth callout exchanges is here.
 */
const HEADER = Buffer.from(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' })).toString(
  'base64url',
);

export function encodeNatsJwt(claims: Record<string, unknown>, signer: KeyPair): string {
  const full = {
    jti: randomBytes(16).toString('hex').toUpperCase(),
    iat: Math.floor(Date.now() / 1000),
    iss: signer.getPublicKey(),
    ...claims,
  };
  const body = `${HEADER}.${Buffer.from(JSON.stringify(full)).toString('base64url')}`;
  const sig = Buffer.from(signer.sign(Buffer.from(body))).toString('base64url');
  return `${body}.${sig}`;
}

/**
 * The claims of a JWT whose signature verifies against its own `iss`, and whose issuer is a
 * server key (`N…`) when `serverSigned`; undefined for anything else.
 */
export function decodeNatsJwt(token: string): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const [head = '', body = '', sig = ''] = parts;
  try {
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >;
    const iss = claims.iss;
    if (typeof iss !== 'string' || !iss.startsWith('N')) return undefined;
    const ok = fromPublic(iss).verify(
      Buffer.from(`${head}.${body}`),
      Buffer.from(sig, 'base64url'),
    );
    return ok ? claims : undefined;
  } catch {
    return undefined;
  }
}

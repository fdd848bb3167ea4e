import { RECIPIENT_TOKEN_ALG, recipientTokenClaims } from '@herald/proto';
import { SignJWT } from 'jose';

/**
 * A recipient token as a customer's server mints it (`@herald/sdk/server` `recipientToken` makes
 * the same): HS256 with the key's signing secret, claims `sub`, `iat`, `exp` and nothing else. For
 * `token create`, which lets an operator try a key that requires tokens. Throws proto's
 * TokenInputError naming `secret`, `recipient` or `ttl`.
 */
export async function mintRecipientToken(
  secret: string,
  recipient: string,
  ttl: string | undefined,
  now: number = Date.now(),
): Promise<{ token: string; expires_at: Date }> {
  const made = recipientTokenClaims({ secret, recipient, ttl }, now);
  const token = await new SignJWT({ ...made.claims })
    .setProtectedHeader({ alg: RECIPIENT_TOKEN_ALG, typ: 'JWT' })
    .sign(new TextEncoder().encode(made.secret));
  return { token, expires_at: new Date(made.claims.exp * 1000) };
}

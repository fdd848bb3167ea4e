/**
 * @herald/sdk/server: what a customer's server does for Herald, never shipped to browsers (a
 * separate entry: the browser build never imports it). It signs recipient tokens with a key's
 * signing secret, which must never reach a browser.
 */
import {
  RECIPIENT_TOKEN_ALG,
  type RecipientTokenInput,
  recipientTokenClaims,
  TokenInputError,
} from '@herald/proto/wire';
import { SignJWT } from 'jose';

export { TokenInputError };

/** What {@link recipientToken} signs. */
export interface RecipientTokenOptions {
  /** The key's signing secret (`hk_sign_…`), shown once when tokens were turned on. */
  secret: string;
  /** The user's id (UUID v4): the token opens this recipient's sockets only. */
  recipient: string;
  /** How long the token lives: seconds, or `"90s"`, `"15m"`, `"1h"`. Default `"1h"`; at most 24 h. */
  ttl?: number | string;
}

const encoder = new TextEncoder();

/**
 * A recipient token for `recipient`: a JWT signed HS256 with the key's signing secret, claims
 * `sub` (the recipient, lower case), `iat` and `exp`, nothing else. Hand it to the browser (the
 * SDK's `getToken`), which connects with it; the SDK asks again before it expires. Throws a
 * {@link TokenInputError} (a TypeError whose `field` is `secret`, `recipient` or `ttl`) for bad
 * input, before signing anything.
 */
export async function recipientToken(options: RecipientTokenOptions): Promise<string> {
  const input: RecipientTokenInput = options ?? {};
  const { secret, claims } = recipientTokenClaims(input, Date.now());
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: RECIPIENT_TOKEN_ALG, typ: 'JWT' })
    .sign(encoder.encode(secret));
}

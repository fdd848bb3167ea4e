import { isUuidV4 } from './uuid.js';

/*
 * Recipient tokens (DESIGN.md, "Recipient tokens"): a JWT a customer's server signs HS256 with its
 * key's signing secret, claims `sub` (the recipient), `iat` and `exp`, and nothing else. The edge
 * checks them (socket-edge admit/recipient-token.ts); the SDK's server entry and the admin CLI's
 * `token create` make them from these rules, so the two never disagree on a claim. Zod-free: the
 * SDK bundles it.
 */

/** A signing secret's prefix, so secret scanners can find a leaked one. */
export const SIGNING_SECRET_PREFIX = 'hk_sign_';

/** A signing secret as auth makes them: the prefix, then 43 base62 characters (32 bytes). */
export const SIGNING_SECRET_FORMAT = /^hk_sign_[0-9A-Za-z]{43}$/;

/** The only algorithm the edge accepts. */
export const RECIPIENT_TOKEN_ALG = 'HS256';

/** A token's lifetime when none is given: an hour (clients fetch a fresh one before it lapses). */
export const DEFAULT_TOKEN_TTL_S = 3600;

/** The longest lifetime minted: the edge's default TOKEN_MAX_LIFETIME_MS (24 h) refuses longer. */
export const MAX_TOKEN_TTL_S = 24 * 3600;

/** The claims of a recipient token, all of them. */
export interface RecipientTokenClaims {
  sub: string;
  iat: number;
  exp: number;
}

/** What a recipient token is made from. */
export interface RecipientTokenInput {
  /** The key's signing secret (`hk_sign_…`), shown once when tokens were turned on. */
  secret: unknown;
  /** The recipient (UUID v4) the token opens sockets for. */
  recipient: unknown;
  /** Seconds, or a string such as `90s`, `15m`, `1h`; default an hour, at most 24 hours. */
  ttl?: unknown;
}

/** A bad input of a recipient token: `field` names it (`secret`, `recipient` or `ttl`). */
export class TokenInputError extends TypeError {
  readonly field: 'secret' | 'recipient' | 'ttl';

  constructor(field: 'secret' | 'recipient' | 'ttl', message: string) {
    super(message);
    this.name = 'TokenInputError';
    this.field = field;
  }
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `ttl` in seconds; throws {@link TokenInputError} naming `ttl`. */
export function tokenTtlSeconds(ttl: unknown): number {
  if (ttl === undefined) return DEFAULT_TOKEN_TTL_S;
  const match = typeof ttl === 'string' ? /^([0-9]{1,6})([smhd])$/.exec(ttl.trim()) : null;
  const seconds =
    typeof ttl === 'number' ? ttl : match ? Number(match[1]) * (UNITS[match[2] ?? ''] ?? 0) : NaN;
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_TOKEN_TTL_S) {
    throw new TokenInputError(
      'ttl',
      `ttl must be a whole number of seconds from 1 to ${MAX_TOKEN_TTL_S}, or a span such as "90s", "15m" or "1h" (at most 24h, the edge's default TOKEN_MAX_LIFETIME_MS); got ${JSON.stringify(ttl)}`,
    );
  }
  return seconds;
}

/**
 * Checks a token's inputs and returns the secret and the claims to sign, `iat` from `nowMs`.
 * Throws {@link TokenInputError} naming the field: a secret that is not a signing secret (an API
 * key passed by mistake is called out), a recipient that is not a UUID v4, a bad ttl.
 */
export function recipientTokenClaims(
  input: RecipientTokenInput,
  nowMs: number,
): { secret: string; claims: RecipientTokenClaims } {
  const { secret, recipient } = input;
  if (typeof secret !== 'string' || !SIGNING_SECRET_FORMAT.test(secret)) {
    const apiKey = typeof secret === 'string' && /^hk_(live|test)_/.test(secret);
    throw new TokenInputError(
      'secret',
      apiKey
        ? 'secret must be the key’s signing secret (hk_sign_…), not the API key: the signing secret was shown once when tokens were turned on (`key require-token`, or `key rotate-secret` for a new one)'
        : 'secret must be the key’s signing secret: hk_sign_ and 43 letters or digits, shown once when tokens were turned on (`key require-token`, or `key rotate-secret` for a new one)',
    );
  }
  if (!isUuidV4(recipient)) {
    throw new TokenInputError(
      'recipient',
      'recipient must be the user’s id as a UUID v4 (the recipient the socket connects as): the token opens that recipient’s sockets only',
    );
  }
  const iat = Math.floor(nowMs / 1000);
  return {
    secret,
    claims: { sub: recipient.toLowerCase(), iat, exp: iat + tokenTtlSeconds(input.ttl) },
  };
}

import { HeraldError, type VerifiedKey } from '@herald/proto';
import { errors, type JWTPayload, jwtVerify } from 'jose';

/** How recipient tokens are judged, by the edge and by ingress's push routes (TOKEN_MAX_LIFETIME_MS, TOKEN_CLOCK_SKEW_MS). */
export interface TokenPolicy {
  /** The furthest a token's `exp` may be from now (and from its `iat`), ms. */
  maxLifetimeMs: number;
  /** Clock difference tolerated on `exp`, `nbf` and `iat`, ms. */
  clockSkewMs: number;
}

const encoder = new TextEncoder();
const MINT =
  'mint a token signed HS256 with the key’s signing secret, claims sub (the recipient) and exp';

/**
 * For a key that requires recipient tokens, checks the token of a connect (or an in-band refresh)
 * and returns when it expires (epoch ms); undefined for a key that does not require one (a token
 * sent anyway is ignored). The token must be a JWT signed HS256 with one of the key's signing
 * secrets (the current one, or the one a rotation replaced while its overlap lasts), carry `exp`
 * within the policy's lifetime and `sub` equal to the socket's recipient; `nbf` and `iat` are
 * honoured. Throws 401 `missing_token` / `invalid_token` or 403 `token_recipient_mismatch`. A
 * token is never put in a message or a log line.
 */
export async function checkRecipientToken(
  key: VerifiedKey,
  token: string | undefined,
  recipient: string,
  policy: TokenPolicy,
  now: number,
): Promise<number | undefined> {
  if (key.require_token !== true) return undefined;
  if (token === undefined) {
    throw new HeraldError(
      'missing_token',
      `this key requires a recipient token: add token=<JWT> to the query (${MINT})`,
      { field: 'token' },
    );
  }
  const payload = await verifyWithAnySecret(key, token, policy, now);
  const expiresAt = (payload.exp as number) * 1000;
  const limit = policy.maxLifetimeMs + policy.clockSkewMs;
  const issuedAt = typeof payload.iat === 'number' ? payload.iat * 1000 : undefined;
  if (expiresAt - now > limit || (issuedAt !== undefined && expiresAt - issuedAt > limit)) {
    throw invalid(
      `its exp is more than ${policy.maxLifetimeMs} ms after ${issuedAt === undefined ? 'now' : 'its iat'}, longer than this edge allows (TOKEN_MAX_LIFETIME_MS): mint tokens that live less`,
    );
  }
  if (typeof payload.sub !== 'string' || payload.sub.toLowerCase() !== recipient) {
    throw new HeraldError(
      'token_recipient_mismatch',
      'the token was minted for another recipient: its sub must equal the recipient query parameter',
      { field: 'token' },
    );
  }
  return expiresAt;
}

async function verifyWithAnySecret(
  key: VerifiedKey,
  token: string,
  policy: TokenPolicy,
  now: number,
): Promise<JWTPayload> {
  const secrets = (key.signing_secrets ?? []).filter((s) => s.until === null || now < s.until);
  // Auth always sends the current secret of a key that requires tokens; none is a bug, not the
  // client's fault: `internal`, logged by the caller.
  if (secrets.length === 0) throw new Error(`auth gave no signing secret for key ${key.id}`);
  let failure: unknown;
  for (const { secret } of secrets) {
    try {
      const { payload } = await jwtVerify(token, encoder.encode(secret), {
        algorithms: ['HS256'],
        requiredClaims: ['exp', 'sub'],
        clockTolerance: policy.clockSkewMs / 1000,
        currentDate: new Date(now),
      });
      return payload;
    } catch (err) {
      failure = err;
      // Only a signature another secret may match is worth trying again; the rest is the token's.
      if (!(err instanceof errors.JWSSignatureVerificationFailed)) break;
    }
  }
  throw invalid(reasonOf(failure));
}

function reasonOf(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'it has expired: get a fresh one from your server';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf') return 'it is not valid yet (nbf is in the future)';
    if (err.claim === 'iat') return 'its iat is in the future';
    return `its ${err.claim} claim is missing or malformed: ${MINT}`;
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) {
    return 'its signature does not match this key’s signing secret: sign it with the secret shown when the key was made (or rotated)';
  }
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) {
    return 'it is not signed HS256 (no other algorithm, and never none, is accepted)';
  }
  return `it is not a well-formed JWT: ${MINT}`;
}

function invalid(why: string): HeraldError {
  return new HeraldError('invalid_token', `token refused: ${why}`, { field: 'token' });
}

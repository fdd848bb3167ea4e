import type { KeyVerifier } from '@herald/access';
import { checkRecipientToken, type TokenPolicy } from '@herald/access';
import type { Logger } from '@herald/kit';
import type { EdgeMetrics } from '../metrics.js';
import type { EdgeSocket } from '../socket/edge-socket.js';
import { connectError } from './refusal.js';
import { TokenLease } from './token-lease.js';

export interface TokenRefreshDeps {
  verifier: KeyVerifier;
  tokenPolicy: TokenPolicy;
  metrics: EdgeMetrics;
  logger: Logger;
}

/**
 * Watches the recipient token of a socket whose key requires one: closes the socket 4401
 * `token_expired` when it expires, unless a fresh token came in-band first (herald.v1
 * `{"type":"token","token":…}`), checked exactly as at connect, with the key's current secrets
 * (a rotation's overlap included). A bad fresh token closes the socket with its refusal (4401 /
 * 4403); auth unreachable keeps the current token's deadline. Returns what to do with a token
 * frame's token.
 */
export function watchToken(
  deps: TokenRefreshDeps,
  socket: EdgeSocket,
  apiKey: string,
  expiresAt: number,
): (token: string) => void {
  const lease = new TokenLease(expiresAt, (err) => {
    deps.metrics.rejections.inc({ code: err.code });
    socket.fail(err);
  });
  socket.ws.once('close', () => lease.stop());
  let refreshing = Promise.resolve();
  const refresh = async (token: string): Promise<void> => {
    try {
      const key = await deps.verifier.verify(apiKey);
      const until = await checkRecipientToken(
        key,
        token,
        socket.recipient,
        deps.tokenPolicy,
        Date.now(),
      );
      if (until !== undefined && socket.open) lease.renew(until);
    } catch (err) {
      const error = connectError(err, (internal) =>
        deps.logger.error({ err: internal }, 'token refresh failed'),
      );
      if (error.code === 'unavailable' || error.code === 'internal') {
        deps.logger.warn(
          { code: error.code, keyId: socket.key.id },
          'could not check a fresh token: the current one stands',
        );
        return;
      }
      deps.metrics.rejections.inc({ code: error.code });
      lease.stop();
      socket.fail(error);
    }
  };
  return (token) => {
    // One refresh at a time, in the order sent: the last accepted token's expiry stands.
    refreshing = refreshing.then(() => refresh(token));
  };
}

import { authorizeKeyUse, type KeyVerifier } from '@herald/access';
import type { Logger } from '@herald/kit';
import { type AuthInvalidate, HeraldError } from '@herald/proto';
import type { EdgeMetrics } from '../metrics.js';
import type { EdgeSocket } from '../socket/edge-socket.js';
import { connectError } from './refusal.js';

/**
 * On every auth invalidation (revocation, reset, plan change, tokens turned on), re-verifies the
 * keys of the open sockets it may concern (same key id, or same account) and closes those whose
 * key no longer passes: 4401 for a revoked or expired key, or `missing_token` for a socket without
 * a recipient token once its key requires one, 4403 for an inactive plan (herald.v1 clients get an ErrorFrame first). When auth cannot answer, sockets stay open: an outage is not a revocation.
 * Returns the function that stops listening.
 */
export function watchRevocations(
  verifier: KeyVerifier,
  sockets: () => Iterable<EdgeSocket>,
  metrics: EdgeMetrics,
  logger: Logger,
): () => void {
  return verifier.onInvalidate((msg: AuthInvalidate) => {
    for (const socket of [...sockets()]) {
      // A Pusher socket's key is its app's: the Pusher wing re-checks those (src/pusher/).
      if (socket.wire) continue;
      const concerned =
        (msg.key_id && socket.key.id === msg.key_id) ||
        (msg.account_id && socket.account === msg.account_id);
      if (concerned) void recheck(socket, verifier, metrics, logger);
    }
  });
}

async function recheck(
  socket: EdgeSocket,
  verifier: KeyVerifier,
  metrics: EdgeMetrics,
  logger: Logger,
): Promise<void> {
  try {
    const key = await socket.reverify(verifier);
    authorizeKeyUse(key, { client: socket.client, origin: socket.origin, now: Date.now() });
    // Admitted while its key required no token, so none was checked (one sent anyway was
    // ignored): now that the key requires one, the socket has none.
    if (key.require_token === true && socket.key.require_token !== true) throw tokenNowRequired();
    if (key.id === socket.key.id && key.account_id === socket.account) socket.refreshKey(key);
  } catch (err) {
    // A bug is logged by the line below, as an outage is: neither is a revocation.
    const error = connectError(err, () => undefined);
    if (error.code === 'unavailable' || error.code === 'internal') {
      logger.warn(
        { code: error.code, keyId: socket.key.id },
        'could not re-verify a key after an invalidation: socket kept open',
      );
      return;
    }
    metrics.rejections.inc({ code: error.code });
    logger.info(
      { code: error.code, keyId: socket.key.id },
      'closing socket: its key no longer verifies',
    );
    socket.fail(error);
  }
}

function tokenNowRequired(): HeraldError {
  return new HeraldError(
    'missing_token',
    'this key now requires a recipient token, and this socket opened without one: reconnect with token=<JWT> (minted by your server with the key’s signing secret)',
    { field: 'token' },
  );
}

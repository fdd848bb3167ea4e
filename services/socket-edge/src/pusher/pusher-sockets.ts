import { authorizeKeyUse, authorizeScope, type KeyVerifier } from '@herald/access';
import type { Logger } from '@herald/kit';
import { type AuthInvalidate, HeraldError } from '@herald/proto';
import type { WebSocket } from 'ws';
import type { EdgeMetrics } from '../metrics.js';
import type { AppLookup } from './app-lookup.js';
import { PusherClose, pusherCloseOf } from './pusher-frames.js';
import type { PusherSocket } from './pusher-socket.js';

/**
 * The Pusher sockets open on this edge: for the heartbeat, the re-checks after an auth
 * invalidation, and the shutdown. Listens to the edge's KeyVerifier for invalidations, drops the
 * app lookups they concern first, then re-looks up the app of every socket of that key or
 * account: an app gone closes 4001, a bound key refused 4003 (revoked, expired, plan lapsed), a
 * key whose Origin or scope no longer passes 4009; auth unreachable keeps them open (an outage is
 * not a revocation). A new secret or key verdict is taken in place.
 */
export class PusherSockets {
  readonly #open = new Set<PusherSocket>();
  readonly #lookup: AppLookup;
  readonly #metrics: EdgeMetrics;
  readonly #logger: Logger;
  readonly #stop: () => void;

  constructor(verifier: KeyVerifier, lookup: AppLookup, metrics: EdgeMetrics, logger: Logger) {
    this.#lookup = lookup;
    this.#metrics = metrics;
    this.#logger = logger;
    this.#stop = verifier.onInvalidate((msg) => this.#invalidated(msg));
  }

  get size(): number {
    return this.#open.size;
  }

  add(socket: PusherSocket): void {
    this.#open.add(socket);
  }

  remove(socket: PusherSocket): void {
    this.#open.delete(socket);
  }

  sockets(): Iterable<PusherSocket> {
    return this.#open;
  }

  /**
   * Shutdown: stops listening, sends every socket `pusher:error` 4200 and closes it with 4200
   * (pusher-js reconnects at once, to another edge); returns their WebSockets, for the caller to
   * wait on and terminate after its grace.
   */
  shutdown(): WebSocket[] {
    this.#stop();
    const open = [...this.#open];
    for (const socket of open) {
      socket.refuse(
        PusherClose.reconnect,
        'This edge is shutting down: reconnect (another edge will take you)',
      );
    }
    return open.map((s) => s.ws);
  }

  #invalidated(msg: AuthInvalidate): void {
    this.#lookup.invalidate(msg);
    for (const socket of [...this.#open]) {
      const concerned =
        (msg.key_id && socket.key.id === msg.key_id) ||
        (msg.account_id && socket.account === msg.account_id);
      if (concerned) void this.#recheck(socket);
    }
  }

  async #recheck(socket: PusherSocket): Promise<void> {
    try {
      const grant = await this.#lookup.byKey(socket.app.key);
      if (grant.app.account_id !== socket.account || grant.app.app_id !== socket.app.app_id) {
        throw new HeraldError('invalid_api_key', 'This app no longer exists');
      }
      authorizeKeyUse(grant.key, {
        client: grant.key.client,
        origin: socket.origin,
        now: Date.now(),
      });
      authorizeScope(grant.key, 'subscribe');
      socket.refresh(grant);
    } catch (err) {
      const error =
        err instanceof HeraldError
          ? err
          : new HeraldError('internal', 'could not re-check the app');
      if (error.code === 'unavailable' || error.code === 'internal') {
        this.#logger.warn(
          { code: error.code, keyId: socket.key.id },
          'could not re-check a Pusher app after an invalidation: socket kept open',
        );
        return;
      }
      this.#metrics.rejections.inc({ code: error.code });
      this.#logger.info(
        { code: error.code, keyId: socket.key.id },
        'closing Pusher socket: its app no longer passes',
      );
      socket.refuse(pusherCloseOf(error), error.message);
    }
  }
}

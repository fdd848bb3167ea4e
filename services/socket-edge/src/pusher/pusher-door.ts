import type { KeyVerifier } from '@herald/access';
import type { NatsConnection } from 'nats';
import { AppLookup } from './app-lookup.js';
import { ChannelFanout } from './channel-fanout.js';
import type { PusherContext } from './pusher-context.js';
import { PusherSockets } from './pusher-sockets.js';
import { createPusherUpgrade, type PusherUpgradeDeps } from './pusher-upgrade.js';

/** What the edge hands the Pusher door: its shared parts, and the door's settings. */
export interface PusherDoorDeps
  extends Omit<PusherUpgradeDeps, 'lookup' | 'sockets' | 'ctx' | 'trustedProxyHops'>,
    Omit<PusherContext, 'fanout' | 'activityTimeoutS' | 'signinTimeoutMs' | 'maxChannels'> {
  nc: NatsConnection;
  /** The edge's KeyVerifier: its `rt.auth.invalidate` subscription tells the door too. */
  verifier: KeyVerifier;
  /** The edge's settings the door reads (config.ts, bounds tested there). */
  config: PusherDoorConfig;
}

export interface PusherDoorConfig {
  /** How long a found app is reused (as a key verification). */
  KEY_CACHE_TTL_MS: number;
  KEY_NEGATIVE_CACHE_TTL_MS: number;
  AUTH_TIMEOUT_MS: number;
  TRUSTED_PROXY_HOPS: number;
  PUSHER_ACTIVITY_TIMEOUT_S: number;
  PUSHER_SIGNIN_TIMEOUT_MS: number;
  PUSHER_MAX_CHANNELS_PER_SOCKET: number;
}

/**
 * The Pusher door built once for the edge: the app lookup, the open Pusher sockets (heartbeat,
 * re-checks, shutdown: given to service.ts) and the `/app/{key}` upgrade listener.
 */
export function createPusherDoor(deps: PusherDoorDeps) {
  const { nc, logger, metrics } = deps;
  const { config } = deps;
  const lookup = new AppLookup(nc, logger, {
    ttlMs: config.KEY_CACHE_TTL_MS,
    negativeTtlMs: config.KEY_NEGATIVE_CACHE_TTL_MS,
    timeoutMs: config.AUTH_TIMEOUT_MS,
  });
  const sockets = new PusherSockets(deps.verifier, lookup, metrics, logger);
  const ctx: PusherContext = {
    sessions: deps.sessions,
    fanout: new ChannelFanout(nc, logger),
    metrics,
    logger,
    proof: deps.proof,
    feedFor: deps.feedFor,
    activityTimeoutS: config.PUSHER_ACTIVITY_TIMEOUT_S,
    signinTimeoutMs: config.PUSHER_SIGNIN_TIMEOUT_MS,
    maxChannels: config.PUSHER_MAX_CHANNELS_PER_SOCKET,
    closing: deps.closing,
  };
  const upgrade = createPusherUpgrade({
    ...deps,
    trustedProxyHops: config.TRUSTED_PROXY_HOPS,
    lookup,
    sockets,
    ctx,
  });
  return { sockets, upgrade };
}

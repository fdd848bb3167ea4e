import type { Logger } from '@herald/kit';
import type { EdgeMetrics } from '../metrics.js';
import type { RecipientRegistry } from '../session/connection-registry.js';
import type { EdgeSocket } from '../socket/edge-socket.js';
import type { ProofLedgerOptions } from '../socket/proof-ledger.js';
import type { SocketFeed } from '../socket/socket-feed.js';
import type { ChannelFanout } from './channel-fanout.js';

/** What every Pusher socket of the edge shares (one object, built by edge.ts). */
export interface PusherContext {
  /** The recipients' sessions, which a signed-in socket joins as `/ws/connect` sockets do. */
  sessions: RecipientRegistry;
  fanout: ChannelFanout;
  metrics: EdgeMetrics;
  logger: Logger;
  /** The caps on what a member socket holds unproven, and the live proof deadline. */
  proof: ProofLedgerOptions;
  /** A member socket's feed: a device catch-up when its sign-in named a device, else direct. */
  feedFor: (socket: EdgeSocket) => SocketFeed;
  /** PUSHER_ACTIVITY_TIMEOUT_S. */
  activityTimeoutS: number;
  /** PUSHER_SIGNIN_TIMEOUT_MS. */
  signinTimeoutMs: number;
  /** PUSHER_MAX_CHANNELS_PER_SOCKET. */
  maxChannels: number;
  /** True once the edge is shutting down. */
  closing: () => boolean;
}

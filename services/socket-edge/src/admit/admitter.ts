import type { KeyVerifier, TokenPolicy } from '@herald/access';
import type { Logger } from '@herald/kit';
import { CloseCodes, SUBPROTOCOL } from '@herald/proto';
import type { InboxClient } from '../inbox/inbox-client.js';
import { type InboxRequestLimits, InboxSocket, refuseInboxFrame } from '../inbox/inbox-socket.js';
import { keepInbox } from '../inbox/socket-inboxes.js';
import type { EdgeMetrics } from '../metrics.js';
import type { RecipientRegistry } from '../session/connection-registry.js';
import { readClientFrame } from '../socket/client-frames.js';
import { EdgeSocket } from '../socket/edge-socket.js';
import type { ProofLedgerOptions } from '../socket/proof-ledger.js';
import type { QueueFrameLimits } from '../socket/queue-frame.js';
import type { SocketFeed } from '../socket/socket-feed.js';
import { watchToken } from './token-refresh.js';
import type { Admission } from './upgrade-handler.js';

/** What happens to a socket once the upgrade handler admitted it: count it, wrap it, attach it. */
export function socketAdmitter(deps: {
  sessions: RecipientRegistry;
  metrics: EdgeMetrics;
  logger: Logger;
  /** The caps on what a socket holds written and unproven, and the live proof deadline. */
  proof: ProofLedgerOptions;
  /** What one `events` frame may carry, for sockets that connected with `batch=1`. */
  queueFrames?: QueueFrameLimits | undefined;
  closing: () => boolean;
  /** Re-reads a key's signing secrets for an in-band token refresh. */
  verifier: KeyVerifier;
  tokenPolicy: TokenPolicy;
  /** Inbox keys' herald.v1 sockets: the store's client and the per-socket request bounds. */
  inbox?: { client: InboxClient; limits: InboxRequestLimits };
  /** Builds a socket's feed: by its device, and whether it has an inbox side. */
  feedFor: (socket: EdgeSocket, inbox: InboxSocket | undefined) => SocketFeed;
}) {
  const { sessions, metrics, logger } = deps;
  // Listeners shared by every socket where they need nothing of it: each closure made per socket
  // is kept as long as the socket, by every idle connection.
  const onError = (err: Error) => logger.debug({ err: err.message }, 'socket error');
  const onSlow = () => metrics.slowConsumerCloses.inc();
  const onClosed = (socket: EdgeSocket) => metrics.openSockets.dec({ framing: socket.framing });
  return ({ ws, framing, params, key, origin, session, hold, tokenExpiresAt }: Admission) => {
    metrics.openSockets.inc({ framing });
    ws.on('error', onError);
    // herald.v1 sockets of an inbox key get unread counts and may ask for history and read marks.
    const inbox =
      framing === SUBPROTOCOL && key.inbox_days && deps.inbox
        ? new InboxSocket(ws, {
            ...deps.inbox,
            account: key.account_id,
            recipient: params.recipient,
            logger,
          })
        : undefined;
    const socket = new EdgeSocket({
      ws,
      framing,
      apiKey: params.api_key,
      key,
      recipient: params.recipient,
      client: params.client,
      device: params.device,
      feed: (s) => deps.feedFor(s, inbox),
      origin,
      proof: deps.proof,
      queueFrames: params.batch === '1' ? deps.queueFrames : undefined,
      hold,
      onClosed,
      onGone: (s) => sessions.detach(session, s),
      onSlow,
    });
    if (inbox) keepInbox(socket, inbox);
    sessions.attach(session, socket);
    if (deps.closing()) {
      socket.close(CloseCodes.goingAway, 'going away');
      return;
    }
    // A socket with a recipient token is closed when it expires, unless refreshed in-band.
    const onToken =
      tokenExpiresAt === undefined
        ? undefined
        : watchToken(deps, socket, params.api_key, tokenExpiresAt);
    // A plain client's frames are ignored; herald.v1 clients send acks, fresh tokens and, with an
    // inbox key, inbox requests (refused in-band with `inbox_disabled` without one).
    if (framing === SUBPROTOCOL) {
      ws.on('message', (data, isBinary) => {
        const frame = readClientFrame(data, isBinary);
        if (frame?.type === 'ack') socket.acked(frame.ids);
        else if (frame?.type === 'token' && onToken) onToken(frame.token);
        else if (frame?.type === 'read' || frame?.type === 'history') {
          if (inbox) inbox.handle(frame.frame);
          else refuseInboxFrame(ws, frame.frame);
        } else metrics.malformedClientFrames.inc();
      });
      void inbox?.greet();
    }
  };
}

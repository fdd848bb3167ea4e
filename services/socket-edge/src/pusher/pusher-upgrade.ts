import { randomInt } from 'node:crypto';
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { authorizeKeyUse, authorizeScope } from '@herald/access';
import { type AuthFailureLimiter, isAuthFailure, type Logger, sourceAddress } from '@herald/kit';
import { assertToken, HeraldError } from '@herald/proto';
import type { WebSocket, WebSocketServer } from 'ws';
import type { ConnectHold } from '../admit/connect-hold.js';
import type { ConnectRateLimiter } from '../admit/connect-rate.js';
import { handshakeError } from '../admit/handshake.js';
import { connectError, refuseUpgrade } from '../admit/refusal.js';
import type { EdgeMetrics } from '../metrics.js';
import type { AppGrant, AppLookup } from './app-lookup.js';
import { handleClientFrame } from './client-events.js';
import type { PusherContext } from './pusher-context.js';
import { closeReason, errorFrame, PusherClose, pusherCloseOf } from './pusher-frames.js';
import { PusherSocket } from './pusher-socket.js';
import type { PusherSockets } from './pusher-sockets.js';

/** The Pusher door's path: `/app/{key}`. */
export const PUSHER_PATH = /^\/app\/([^/]+)$/;

export interface PusherUpgradeDeps {
  wss: WebSocketServer;
  lookup: AppLookup;
  sockets: PusherSockets;
  ctx: PusherContext;
  /** A fresh hold on this edge's MAX_SOCKETS budget and the connection cap (as `/ws/connect`'s). */
  hold: () => ConnectHold;
  connectRate?: ConnectRateLimiter;
  authFailures?: AuthFailureLimiter;
  trustedProxyHops?: number;
  metrics: EdgeMetrics;
  logger: Logger;
}

/**
 * The `upgrade` of `/app/{key}?protocol=7&…`: the same listener, connect rate, failed-auth
 * limit, socket budget, connection cap and metrics as `/ws/connect`, but refusals come AFTER the
 * upgrade, as pusher-js needs them: a `pusher:error {code, message}` frame, then the close with
 * that code (4008 no protocol, 4007 not 7, 4100 over capacity or rate, 4001 unknown app, 4003 app
 * disabled, 4009 Origin or scope refused, 4004 the plan's connection cap, 4200 shutting down).
 * Only a request that cannot be a WebSocket handshake is refused over HTTP.
 */
export function createPusherUpgrade(deps: PusherUpgradeDeps) {
  return (req: http.IncomingMessage, socket: Duplex, head: Buffer): void => {
    const onEarlyError = () => socket.destroy();
    socket.on('error', onEarlyError);
    const bad = handshakeError(req);
    if (bad) {
      deps.metrics.rejections.inc({ code: bad.code });
      refuseUpgrade(socket, bad);
      return;
    }
    socket.off('error', onEarlyError);
    deps.wss.handleUpgrade(req, socket, head, (ws) => {
      void admit(deps, req, ws);
    });
  };
}

async function admit(
  deps: PusherUpgradeDeps,
  req: http.IncomingMessage,
  ws: WebSocket,
): Promise<void> {
  const { ctx, metrics, logger } = deps;
  ws.on('error', (err) => logger.debug({ err: err.message }, 'Pusher socket error'));
  const url = new URL(req.url ?? '/', 'https://edge.invalid');
  const appKey = appKeyOf(url.pathname);
  const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
  const source = sourceAddress(req, deps.trustedProxyHops ?? 0);
  const hold = deps.hold();
  let grant: AppGrant;
  try {
    if (ctx.closing()) throw shuttingDown();
    deps.connectRate?.take(source);
    deps.authFailures?.check(source);
    const protocol = url.searchParams.get('protocol');
    if (protocol === null) {
      throw new PusherRefusal(
        PusherClose.noProtocol,
        'protocol is missing: connect with ?protocol=7',
        'no_protocol',
      );
    }
    if (protocol !== '7') {
      throw new PusherRefusal(
        PusherClose.unsupportedProtocol,
        `protocol ${protocol.slice(0, 10)} is not supported: use protocol 7 (pusher-js 7 or 8)`,
        'unsupported_protocol',
      );
    }
    if (!hold.takeSlot()) {
      throw new HeraldError(
        'unavailable',
        'This edge holds its maximum of sockets: reconnect shortly (another edge may take you)',
      );
    }
    grant = await deps.lookup.byKey(appKey);
    const { key, app } = grant;
    // The tenant is the app's, which auth bound to this key: never anything the client sent.
    if (app.account_id !== key.account_id)
      throw new HeraldError('internal', 'app and key disagree');
    assertToken('account', key.account_id);
    authorizeKeyUse(key, { client: key.client, origin, now: Date.now() });
    authorizeScope(key, 'subscribe');
    const admitting = hold.admit(key, '');
    if (admitting) await admitting;
    if (ctx.closing()) throw shuttingDown();
  } catch (err) {
    hold.release();
    if (err instanceof PusherRefusal) {
      metrics.rejections.inc({ code: err.metric });
      closeWith(ws, err.closeCode, err.message);
      return;
    }
    const error = connectError(err, (internal) =>
      logger.error({ err: internal }, 'Pusher connect failed'),
    );
    if (isAuthFailure(error)) deps.authFailures?.fail(source);
    metrics.rejections.inc({ code: error.code });
    logger.debug({ code: error.code }, 'Pusher connect refused');
    closeWith(ws, ctx.closing() ? PusherClose.reconnect : pusherCloseOf(error), error.message);
    return;
  }
  if (ws.readyState !== ws.OPEN) {
    hold.release();
    return;
  }
  metrics.openSockets.inc({ framing: 'pusher' });
  const pusher = new PusherSocket(ctx, {
    ws,
    socketId: `${randomInt(1, 2 ** 47)}.${randomInt(1, 2 ** 47)}`,
    grant,
    origin,
    hold,
    onClosed: (s) => {
      metrics.openSockets.dec({ framing: 'pusher' });
      deps.sockets.remove(s);
    },
    onFrame: (s, data, isBinary) => handleClientFrame(ctx, s, data, isBinary),
  });
  deps.sockets.add(pusher);
  pusher.start();
}

/** The key in `/app/{key}`; '' (no app has it) when it is not there or not decodable. */
function appKeyOf(pathname: string): string {
  try {
    return decodeURIComponent(PUSHER_PATH.exec(pathname)?.[1] ?? '');
  } catch {
    return '';
  }
}

function closeWith(ws: WebSocket, code: number, message: string): void {
  if (ws.readyState !== ws.OPEN) return;
  ws.send(errorFrame(code, message));
  ws.close(code, closeReason(message));
}

/** A refusal of Pusher's own (no Herald error code): its close code and its metric's label. */
class PusherRefusal extends Error {
  constructor(
    readonly closeCode: number,
    message: string,
    readonly metric: string,
  ) {
    super(message);
  }
}

function shuttingDown(): HeraldError {
  return new HeraldError(
    'unavailable',
    'This edge is shutting down: reconnect (another edge will take you)',
  );
}

import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { authorizeSubscriber, type KeyVerifier, type TokenPolicy } from '@herald/access';
import {
  type AuthFailureLimiter,
  isAuthFailure,
  type Logger,
  safePath,
  sourceAddress,
} from '@herald/kit';
import {
  assertToken,
  CONNECT_PATH,
  type ConnectParams,
  HeraldError,
  parseConnectParams,
  type VerifiedKey,
} from '@herald/proto';
import type { WebSocket, WebSocketServer } from 'ws';
import type { EdgeMetrics } from '../metrics.js';
import type { RecipientRegistry } from '../session/connection-registry.js';
import type { RecipientSession } from '../session/recipient-session.js';
import { closeWithError } from '../socket/closing.js';
import { type Framing, framingOf } from '../socket/framing.js';
import { ConnectHold } from './connect-hold.js';
import type { ConnectRateLimiter } from './connect-rate.js';
import type { ConnectionGate } from './connection-gate.js';
import { handshakeError } from './handshake.js';
import { connectError, refuseUpgrade } from './refusal.js';
import type { SocketBudget } from './socket-budget.js';

/** A connect that passed every check, handed to the edge with its WebSocket. */
export interface Admission {
  ws: WebSocket;
  framing: Framing;
  params: ConnectParams;
  key: VerifiedKey;
  origin: string | undefined;
  /** The recipient's session, subscribed, with this connect reserved in it: attach the socket. */
  session: RecipientSession;
  /** Gives back the MAX_SOCKETS slot and the gate's admission: release it when the socket closes. */
  hold: ConnectHold;
  /** When the connect's recipient token expires (epoch ms); undefined for a key without tokens. */
  tokenExpiresAt: number | undefined;
}

export interface UpgradeHandlerDeps {
  wss: WebSocketServer;
  verifier: KeyVerifier;
  /** The per-address rate of upgrade attempts (429 too_many_connects); none when absent. */
  connectRate?: ConnectRateLimiter;
  /** The per-source limit of failed authentications (403 auth_failures); none when absent. */
  authFailures?: AuthFailureLimiter;
  /** Proxies in front that append to X-Forwarded-For (TRUSTED_PROXY_HOPS); 0 by default. */
  trustedProxyHops?: number;
  gate: ConnectionGate;
  budget: SocketBudget;
  /** TOKEN_MAX_LIFETIME_MS and TOKEN_CLOCK_SKEW_MS: how recipient tokens are judged. */
  tokenPolicy: TokenPolicy;
  sessions: RecipientRegistry;
  metrics: EdgeMetrics;
  logger: Logger;
  /** True once the edge is shutting down: new connects are refused with 503 / 4503. */
  closing: () => boolean;
  onAdmitted: (admission: Admission) => void;
}

/**
 * The `upgrade` listener: authenticates a connect BEFORE it becomes a WebSocket. Checks, in
 * order: path (404), the handshake itself (405 for a method other than GET, 400 `invalid_field`
 * naming the Upgrade, Sec-WebSocket-Key or Sec-WebSocket-Version header: refused here, in JSON,
 * rather than by ws in text/html, and over HTTP whatever the framing, since no WebSocket can open),
 * the address's connect rate (429 `too_many_connects`), its failed authentications (403),
 * query parameters (400, or 401 without api_key), this process's socket budget
 * (503), the key with auth (401, 503 when auth is unreachable), its use (expiry, client, Origin:
 * 401/403), the recipient it may open (a dashboard credential only its dashboard recipient, a
 * customer key never that one: 403), its scope (a dispatch key: 403 `scope_denied`), the recipient
 * token of a key that requires one (401 `missing_token` / `invalid_token`, 403
 * `token_recipient_mismatch`), the connection gate (429). Then it waits until the recipient's session holds its NATS
 * subscriptions (503 if NATS is unreachable), and only then completes the upgrade, so the client
 * sees the socket open once live events can reach it. A plain client is refused with the HTTP
 * status and a JSON body; a herald.v1 client gets an accepted socket that receives one ErrorFrame
 * and is closed at once with 4000 + status, because browsers cannot read an upgrade's status.
 */
export function createUpgradeHandler(deps: UpgradeHandlerDeps) {
  return (req: http.IncomingMessage, socket: Duplex, head: Buffer): void => {
    void admit(deps, req, socket, head);
  };
}

async function admit(
  deps: UpgradeHandlerDeps,
  req: http.IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  const { metrics, logger } = deps;
  // Until ws owns the socket, a client that vanishes mid-auth must not crash the process.
  const onEarlyError = () => socket.destroy();
  socket.on('error', onEarlyError);
  const framing = framingOf(req.headers['sec-websocket-protocol']);
  const url = new URL(req.url ?? '/', 'https://edge.invalid');
  const path = safePath(req.url);
  if (url.pathname !== CONNECT_PATH) {
    metrics.rejections.inc({ code: 'not_found' });
    refuseUpgrade(
      socket,
      new HeraldError('not_found', `No WebSocket endpoint at ${path}: connect to ${CONNECT_PATH}`),
    );
    return;
  }
  const badHandshake = handshakeError(req);
  if (badHandshake) {
    metrics.rejections.inc({ code: badHandshake.code });
    logger.debug({ code: badHandshake.code, path, field: badHandshake.field }, 'connect refused');
    refuseUpgrade(socket, badHandshake);
    return;
  }
  const hold = new ConnectHold(deps.budget, deps.gate);
  let params: ConnectParams;
  let key: VerifiedKey;
  let tokenExpiresAt: number | undefined;
  let session: RecipientSession | undefined;
  const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
  const source = sourceAddress(req, deps.trustedProxyHops ?? 0);
  try {
    if (deps.closing()) throw shuttingDown();
    // An address flooding connects, then one sending bad keys, is refused before any lookup.
    deps.connectRate?.take(source);
    deps.authFailures?.check(source);
    const parsed = parseConnectParams(url.searchParams);
    params = ownedParams(parsed);
    if (!hold.takeSlot()) {
      throw new HeraldError(
        'unavailable',
        `This edge holds its maximum of ${deps.budget.max} sockets: reconnect shortly (another edge may take you)`,
      );
    }
    key = await deps.verifier.verify(params.api_key);
    // Key use, recipient, scope and token: the same checks as a push subscription's (issue 40).
    tokenExpiresAt = await authorizeSubscriber(key, {
      client: params.client,
      origin,
      recipient: params.recipient,
      token: parsed.token,
      policy: deps.tokenPolicy,
      now: Date.now(),
    });
    // The account becomes a subject token; an id that cannot be one is a bug in auth, not the client.
    assertToken('account', key.account_id);
    // The default gate answers synchronously: no await, so no extra turn of the microtask queue.
    const admitting = hold.admit(key, params.recipient);
    if (admitting) await admitting;
    if (deps.closing()) throw shuttingDown();
    session = deps.sessions.reserve(key.account_id, params.recipient);
    await session.ready();
    if (deps.closing()) throw shuttingDown();
  } catch (err) {
    hold.release();
    if (session) deps.sessions.cancel(session);
    const error = connectError(err, (internal) =>
      logger.error({ err: internal, path }, 'connect failed'),
    );
    if (isAuthFailure(error)) deps.authFailures?.fail(source);
    metrics.rejections.inc({ code: error.code });
    if (error.code !== 'internal')
      logger.debug({ code: error.code, path, framing }, 'connect refused');
    if (framing !== 'plain') socket.off('error', onEarlyError);
    reject(deps.wss, req, socket, head, framing, error);
    return;
  }
  socket.off('error', onEarlyError);
  let opened = false;
  const reserved = session;
  deps.wss.handleUpgrade(req, socket, head, (ws) => {
    opened = true;
    deps.onAdmitted({ ws, framing, params, key, origin, session: reserved, hold, tokenExpiresAt });
  });
  // ws refused the handshake itself (the client went away meanwhile); the headers were checked.
  if (!opened) {
    hold.release();
    deps.sessions.cancel(reserved);
  }
}

function reject(
  wss: WebSocketServer,
  req: http.IncomingMessage,
  socket: Duplex,
  head: Buffer,
  framing: Framing,
  err: HeraldError,
): void {
  if (framing === 'plain') {
    refuseUpgrade(socket, err);
    return;
  }
  wss.handleUpgrade(req, socket, head, (ws) => closeWithError(ws, err, framing));
}

/**
 * The parameters as strings of their own. URLSearchParams hands out slices of the request URL, and
 * a slice the socket keeps for its life (the key, for re-verification; the recipient) keeps the
 * whole URL with it, for every idle socket. Both are ASCII once parsed (key format, UUID).
 * The token is left out: it is checked at admission and never kept.
 */
function ownedParams(params: ConnectParams): ConnectParams {
  return {
    api_key: Buffer.from(params.api_key, 'latin1').toString('latin1'),
    recipient: Buffer.from(params.recipient, 'latin1').toString('latin1'),
    client: params.client,
    ...(params.device === undefined
      ? {}
      : { device: Buffer.from(params.device, 'latin1').toString('latin1') }),
    ...(params.batch === undefined ? {} : { batch: params.batch }),
  };
}

function shuttingDown(): HeraldError {
  return new HeraldError(
    'unavailable',
    'This edge is shutting down: reconnect (another edge will take you)',
  );
}

import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { closeCodeOf, type ErrorFrame, HeraldError } from '@herald/proto';
import type { WebSocket } from 'ws';
import type { Framing } from './framing.js';

/** Any failure as the HeraldError to show the client; unknown errors become `internal` (no detail). */
export function asHeraldError(err: unknown): HeraldError {
  if (err instanceof HeraldError) return err;
  return new HeraldError('internal', 'Internal error: retry, and contact support if it persists', {
    cause: err,
  });
}

/**
 * Refuses an upgrade with an HTTP status and the JSON error body (plain clients, and any client
 * whose request never became a WebSocket), then destroys the socket once the response is out.
 */
export function refuseUpgrade(socket: Duplex, err: HeraldError): void {
  if (socket.destroyed) return;
  const body = JSON.stringify(err.toBody());
  const head = [
    `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? ''}`,
    'Connection: close',
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    ...(err.retryAfter === undefined ? [] : [`Retry-After: ${err.retryAfter}`]),
    // The one method a connect takes (RFC 9110 §15.5.6: a 405 names the allowed ones).
    ...(err.code === 'method_not_allowed' ? ['Allow: GET'] : []),
  ];
  socket.once('finish', () => socket.destroy());
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}

/**
 * Closes a socket for a policy reason with `4000 + status`. A herald.v1 client first gets an
 * ErrorFrame (the full message and field); the close reason carries only the code, because close
 * reasons are limited to 123 bytes.
 */
export function closeWithError(ws: WebSocket, err: HeraldError, framing: Framing): void {
  if (ws.readyState !== ws.OPEN) return;
  if (framing === 'herald.v1') {
    const frame: ErrorFrame = { type: 'error', error: err.toBody().error };
    ws.send(JSON.stringify(frame));
  }
  ws.close(closeCodeOf(err.code), JSON.stringify({ code: err.code }));
}

import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { toHeraldError } from '@herald/kit';
import type { HeraldError } from '@herald/proto';

/**
 * Any failure of a connect, or of a socket's re-verification, as the HeraldError to show the
 * client, through kit's one mapping: a HeraldError keeps its code; a bug is `internal`, told to
 * `onInternal` (to log it) and shown without detail.
 */
export function connectError(err: unknown, onInternal: (err: unknown) => void): HeraldError {
  return toHeraldError(err, {
    onInternal: (_requestId, internal) => onInternal(internal),
    internalMessage: () => 'Internal error: retry, and contact support if it persists',
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

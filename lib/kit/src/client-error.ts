import http from 'node:http';
import type { Socket } from 'node:net';
import { type ErrorCode, statusOf } from '@herald/proto';

/** The codes (proto's catalogue) a listener answers a request with before any handler saw it. */
export type ClientErrorCode = Extract<
  ErrorCode,
  'request_timeout' | 'headers_too_large' | 'bad_request' | 'payload_too_large'
>;

/** How long a refused connection may take to read its answer before it is cut off. */
const LINGER_MS = 1000;

export interface ClientErrorLimits {
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  /** The largest header block the listener parses, in bytes. */
  maxHeaderSize: number;
}

/**
 * A `clientError` listener: answers a request Node's HTTP parser refused (too slow, headers too
 * large, not HTTP) with the JSON error shape instead of Node's empty body, then closes the
 * connection. Answers only while the socket is writable and no response was started on it;
 * never echoes the request's bytes.
 */
export function answerClientError(limits: ClientErrorLimits) {
  return (err: Error & { code?: string }, socket: Socket): void => {
    const response = (socket as Socket & { _httpMessage?: http.ServerResponse | null })
      ._httpMessage;
    if (!socket.writable || response?.headersSent) {
      socket.destroy();
      return;
    }
    const [code, message] = describe(err.code, limits);
    const body = JSON.stringify({ error: { code, message } });
    const status = statusOf(code);
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
    // end() half-closes so the client reads the answer (destroying with unread request bytes in
    // the kernel's buffer would reset the connection first); a client that never closes its side
    // is cut off.
    const linger = setTimeout(() => socket.destroy(), LINGER_MS);
    linger.unref();
    socket.once('close', () => clearTimeout(linger));
  };
}

function describe(
  errCode: string | undefined,
  limits: ClientErrorLimits,
): [ClientErrorCode, string] {
  switch (errCode) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [
        'request_timeout',
        `send the headers within ${seconds(limits.headersTimeoutMs)} s and the whole request within ${seconds(limits.requestTimeoutMs)} s`,
      ];
    case 'HPE_HEADER_OVERFLOW':
      return [
        'headers_too_large',
        `the request headers are over ${limits.maxHeaderSize} bytes: send fewer or smaller headers`,
      ];
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return [
        'payload_too_large',
        'the chunk extensions of the body are too large: send the body without chunk extensions',
      ];
    default:
      return ['bad_request', 'the request is not valid HTTP/1.1: send a well-formed request'];
  }
}

function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

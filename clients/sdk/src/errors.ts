import type { ErrorCode } from '@herald/proto/wire';

/**
 * Codes the SDK produces itself, when there is no server answer to carry one:
 * - `network_error`: the request or socket failed before Herald answered;
 * - `timeout`: `notify` got no answer within `notifyTimeoutMs`;
 * - `unexpected_response`: an answer that is not Herald's (a proxy's error page, say);
 * - `websocket_unavailable`: no WebSocket in this runtime and none injected;
 * - `wrong_endpoint`: the socket URL answers HTTP but is not a Herald socket endpoint (a 404, or
 *   another server), so retrying cannot help;
 * - `endpoint_unverified`: a socket failed before opening and its URL answered HTTP with a status
 *   this page may not read (cross-origin, without CORS: a proxy while the edge restarts, or a
 *   `wsUrl` on another server); the SDK keeps retrying;
 * - `token_unavailable`: `options.getToken` threw or gave no token; the SDK retries with backoff;
 * - `not_connected`: an inbox `history` request while the socket is not open, or that it closed
 *   before answering; retry once connected.
 */
export type ClientErrorCode =
  | 'wrong_endpoint'
  | 'endpoint_unverified'
  | 'network_error'
  | 'timeout'
  | 'unexpected_response'
  | 'websocket_unavailable'
  | 'token_unavailable'
  | 'not_connected';

/**
 * A server code from the catalogue, or one of the SDK's own. A newer server may send a code this
 * version does not list; it is passed through unchanged, hence the open string.
 */
export type HeraldErrorCode = ErrorCode | ClientErrorCode | (string & {});

/**
 * What went wrong, for `onError` callbacks that branch without knowing every code:
 * - `wrong_endpoint`: the URL is not Herald's (a wrong `wsUrl`/`baseUrl`); fix the configuration;
 * - `refused`: Herald answered with a refusal code (bad key, Origin, plan, parameters, cap);
 * - `unavailable`: Herald answered but cannot serve now (4503, 4500, 5xx), or something answered
 *   whose status cannot be read (`endpoint_unverified`); the SDK retries;
 * - `network`: no answer at all (DNS, TCP, TLS, timeout); the SDK retries;
 * - `runtime`: this runtime cannot open a socket (no WebSocket, CSP).
 */
export type HeraldErrorKind = 'wrong_endpoint' | 'refused' | 'unavailable' | 'network' | 'runtime';

export interface HeraldErrorDetails {
  field?: string | undefined;
  httpStatus?: number | undefined;
  retryAfter?: number | undefined;
  closeCode?: number | undefined;
  /** The runtime's own error behind this one (Node's network error, say), as `Error.cause`. */
  cause?: unknown;
}

/** A failure with the server's stable code and the message that says how to fix it. */
export class HeraldError extends Error {
  readonly code: HeraldErrorCode;
  /** The request field at fault, when the server named one. */
  readonly field: string | undefined;
  /** The HTTP status of a `notify` answer; 0 when there was none. */
  readonly httpStatus: number;
  /**
   * Seconds to wait before retrying, from `Retry-After` (`rate_limited`; `unavailable` while Herald
   * cannot reach NATS) or a socket's close reason (4429 `too_many_connects`); the SDK's reconnect
   * honours it.
   */
  readonly retryAfter: number | undefined;
  /** The close code of a refused socket (4400, 4401, 4403, 4429, ...). */
  readonly closeCode: number | undefined;
  /** The family of the failure; see {@link HeraldErrorKind}. */
  readonly kind: HeraldErrorKind;

  constructor(code: HeraldErrorCode, message: string, details: HeraldErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'HeraldError';
    this.code = code;
    this.field = details.field;
    this.httpStatus = details.httpStatus ?? 0;
    this.retryAfter = details.retryAfter;
    this.closeCode = details.closeCode;
    this.kind = kindOf(code, this.httpStatus, details.closeCode);
  }
}

function kindOf(code: string, httpStatus: number, closeCode: number | undefined): HeraldErrorKind {
  switch (code) {
    case 'wrong_endpoint':
    case 'not_found':
      return 'wrong_endpoint';
    case 'unexpected_response':
      // A close code means Herald's edge answered, only without a readable reason. Without one,
      // a 5xx that is not Herald's is a proxy's (its upstream restarting): retry, as for Herald's.
      if (closeCode === undefined && httpStatus < 500) return 'wrong_endpoint';
      break;
    case 'endpoint_unverified':
    case 'token_unavailable':
      return 'unavailable';
    case 'network_error':
    case 'timeout':
    case 'not_connected':
      return 'network';
    case 'websocket_unavailable':
      return 'runtime';
  }
  const status = closeCode !== undefined ? closeCode - 4000 : httpStatus;
  return status >= 500 ? 'unavailable' : 'refused';
}

import type { ErrorCode } from '@herald/proto/wire';

/**
 * Codes the SDK produces itself, when there is no server answer to carry one:
 * - `network_error`: the request or socket failed before Herald answered;
 * - `timeout`: `notify` got no answer within `notifyTimeoutMs`;
 * - `unexpected_response`: an answer that is not Herald's (a proxy's error page, say);
 * - `websocket_unavailable`: no WebSocket in this runtime and none injected.
 */
export type ClientErrorCode =
  | 'network_error'
  | 'timeout'
  | 'unexpected_response'
  | 'websocket_unavailable';

/**
 * A server code from the catalogue, or one of the SDK's own. A newer server may send a code this
 * version does not list; it is passed through unchanged, hence the open string.
 */
export type HeraldErrorCode = ErrorCode | ClientErrorCode | (string & {});

export interface HeraldErrorDetails {
  field?: string | undefined;
  httpStatus?: number | undefined;
  retryAfter?: number | undefined;
  closeCode?: number | undefined;
}

/** A failure with the server's stable code and the message that says how to fix it. */
export class HeraldError extends Error {
  readonly code: HeraldErrorCode;
  /** The request field at fault, when the server named one. */
  readonly field: string | undefined;
  /** The HTTP status of a `notify` answer; 0 when there was none. */
  readonly httpStatus: number;
  /** Seconds to wait before retrying (`rate_limited`), from `Retry-After`. */
  readonly retryAfter: number | undefined;
  /** The close code of a refused socket (4400, 4401, 4403, 4429, ...). */
  readonly closeCode: number | undefined;

  constructor(code: HeraldErrorCode, message: string, details: HeraldErrorDetails = {}) {
    super(message);
    this.name = 'HeraldError';
    this.code = code;
    this.field = details.field;
    this.httpStatus = details.httpStatus ?? 0;
    this.retryAfter = details.retryAfter;
    this.closeCode = details.closeCode;
  }
}

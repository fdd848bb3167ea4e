/**
 * The error-code catalogue. A code is stable: clients switch on it. Each code has exactly one
 * HTTP status and, for sockets, the close code `4000 + status` (herald.v1 framing).
 */
export const ErrorCodes = {
  /** Body is not parseable JSON, or not a JSON object. */
  invalid_json: 400,
  /** Content-Type is not application/json. */
  unsupported_content_type: 400,
  /** A required field is absent. */
  missing_field: 400,
  /** recipient is not a UUID v4. */
  invalid_recipient: 400,
  /** client is not `web` or `mobile`. */
  invalid_client: 400,
  /** A query or body field has the wrong type or shape. */
  invalid_field: 400,
  /** api_key is absent. */
  missing_api_key: 401,
  /** Login failed: the email or the password is wrong (deliberately not saying which). */
  invalid_credentials: 401,
  /** The account API needs a session: log in (POST /v1/sessions) first. */
  not_authenticated: 401,
  /**
   * api_key is not a key Herald issued: unknown, malformed, or not a non-empty string. One code
   * for all, on /notify, the NATS dispatch subject and /ws/connect alike.
   */
  invalid_api_key: 401,
  /**
   * The key requires recipient tokens and the connect carried none (`token=`), or an open socket
   * has none when its key begins requiring them (`key require-token`).
   */
  missing_token: 401,
  /**
   * The recipient token is not one this key's signing secret made: a bad signature, malformed,
   * signed with another algorithm than HS256 (`none` included), expired, not yet valid, or living
   * longer than the edge allows.
   */
  invalid_token: 401,
  /** The socket's recipient token expired and no fresh one came in-band: reconnect with a new one. */
  token_expired: 401,
  /** The key was revoked. */
  key_revoked: 401,
  /** The key is past its expiry (Test keys live 4 hours). */
  key_expired: 401,
  /** The Origin header does not equal the web key's registered domain. */
  origin_mismatch: 403,
  /** The request's client (web|mobile) differs from the key's. */
  client_mismatch: 403,
  /** The NATS dispatch subject names another account than the key's. */
  account_mismatch: 403,
  /** The recipient token's `sub` is another recipient than the socket's `recipient`. */
  token_recipient_mismatch: 403,
  /**
   * The key's scope does not allow this use: a `subscribe` key dispatching (HTTP, batch, NATS), or
   * a `dispatch` key opening a socket.
   */
  scope_denied: 403,
  /** The account's plan is not active. */
  plan_inactive: 403,
  /** The key's dispatch rate limit is exhausted; see Retry-After. */
  rate_limited: 403,
  /**
   * This source address sent too many invalid API keys recently; every request from it is refused
   * until Retry-After has passed.
   */
  auth_failures: 403,
  /** Live keys need a paid plan with an active subscription. */
  plan_required: 403,
  /** A state-changing account-API request lacks its CSRF token or comes from another Origin. */
  csrf_failed: 403,
  /**
   * A dashboard credential (`hk_dash_`) used outside what it is for: it only opens its account's
   * dashboard recipient (and auth's own copy only dispatches to it over NATS); never `/notify`.
   */
  dashboard_key_scope: 403,
  /** The recipient is the account's dashboard recipient, which only dashboard credentials use. */
  reserved_recipient: 403,
  /** The bytes received are not an HTTP/1.1 request (the listener's parser refused them). */
  bad_request: 400,
  /** No such route. */
  not_found: 404,
  /** The route exists but not with this HTTP method (see the Allow header). */
  method_not_allowed: 405,
  /** A request with the same Idempotency-Key is still being processed. */
  idempotency_in_progress: 409,
  /** The account already has its Test key; support can reset it (`key reset-test`). */
  test_key_exists: 409,
  /** An account with this email already exists. */
  account_exists: 409,
  /** The account already has a payment waiting for the customer's answer: wait for it to end. */
  payment_in_progress: 409,
  /** The account holds as many active Live keys as allowed: revoke one first. */
  too_many_keys: 409,
  /** The account holds as many Pusher apps as MAX_PUSHER_APPS_PER_ACCOUNT allows: delete one first. */
  too_many_apps: 409,
  /** The Idempotency-Key was already used with a different body (recipient, payload or client). */
  idempotency_key_reused: 422,
  /** The headers or the whole request did not arrive within the listener's timeouts. */
  request_timeout: 408,
  /** The payload (or the whole body) is larger than the configured limit. */
  payload_too_large: 413,
  /** The request's headers are larger than the listener accepts. */
  headers_too_large: 431,
  /** The account's concurrent-connection cap is reached. */
  connection_limit: 429,
  /** One client address opened WebSockets faster than the edge's CONNECT_RATE_* allow. */
  too_many_connects: 429,
  /** The recipient's offline queue (or the whole store) is full; nothing older was dropped. */
  queue_full: 507,
  /**
   * The offline queue holds events for as many recipients as QUEUE_MAX_RECIPIENTS allows and this
   * recipient holds none; recipients who already hold events are still queued for.
   */
  queue_recipients_full: 507,
  /**
   * The recipient's inbox holds INBOX_MAX_PER_RECIPIENT events and none is read: nothing was
   * dropped; mark events read (or wait for retention) before sending more to this recipient.
   */
  inbox_full: 507,
  /** The account has TOPICS_PER_ACCOUNT_MAX topics, or the topic TOPIC_MEMBERS_MAX members (issue 44). */
  topics_full: 507,
  /** The key is not in inbox mode (`/inbox/*`): create a key with `--inbox-days N` for it. */
  inbox_disabled: 403,
  /** Could neither push nor store (NATS or JetStream unavailable). */
  unavailable: 503,
  /** A bug: logged with a request id, never detailed to the caller. */
  internal: 500,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ErrorCodes;

export function statusOf(code: ErrorCode): number {
  return ErrorCodes[code];
}

/** The socket close code for a rejection or forced close in herald.v1 framing. */
export function closeCodeOf(code: ErrorCode): number {
  return 4000 + ErrorCodes[code];
}

/** Non-error close codes the edge uses. */
export const CloseCodes = {
  /** The edge is shutting down: reconnect (to another edge). */
  goingAway: 1001,
  /** The client sent something the edge cannot accept (a malformed frame). */
  policy: 1008,
  /**
   * The client sent a frame larger than MAX_CLIENT_FRAME_BYTES: RFC 6455 §7.4.1 reserves 1009
   * ("message too big to process") for exactly this, so it is used rather than the generic 1008.
   */
  messageTooBig: 1009,
  /**
   * The socket holds more events (or bytes) written and not yet proven received than its cap
   * (MAX_UNPROVEN_EVENTS / MAX_UNPROVEN_BYTES): the client stopped reading. Reconnect; nothing was
   * lost (what it did not prove comes again on the next connect).
   */
  slowConsumer: 1013,
} as const;

export interface ErrorBody {
  error: { code: ErrorCode; message: string; field?: string };
}

/**
 * A failure with a stable code, an HTTP status, the field at fault and a message that says how
 * to fix it. The message is safe to show to the caller.
 */
export class HeraldError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly field: string | undefined;
  /** Seconds, for `rate_limited`. */
  readonly retryAfter: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { field?: string; retryAfter?: number; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'HeraldError';
    this.code = code;
    this.status = ErrorCodes[code];
    this.field = opts.field;
    this.retryAfter = opts.retryAfter;
  }

  toBody(): ErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.field === undefined ? {} : { field: this.field }),
      },
    };
  }

  /** Rebuilds the typed error from a body that crossed NATS or HTTP. */
  static fromBody(body: ErrorBody['error'], retryAfter?: number): HeraldError {
    return new HeraldError(body.code, body.message, {
      ...(body.field === undefined ? {} : { field: body.field }),
      ...(retryAfter === undefined ? {} : { retryAfter }),
    });
  }
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ErrorCodes, value);
}

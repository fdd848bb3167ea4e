import {
  DispatchStatus,
  type ErrorBody,
  type ErrorCode,
  HeraldError,
  type NotifyAccepted,
  type NotifyFailed,
  type NotifyRefused,
} from '@herald/proto';

/**
 * How a dispatch ended, whichever transport carried it, as a value: status records, metrics and
 * answers read `kind`; only {@link toHttp} knows HTTP's statuses and bodies.
 * - `sent`: an edge proved a socket received it (200);
 * - `queued`: JetStream acked the store (202);
 * - `refused`: the caller's request or quota was at fault (4xx, and 507 `queue_full`): nothing was
 *   sent or stored;
 * - `failed`: Herald could not complete it (503 `unavailable`, 500 `internal`).
 *
 * `id` is the event's once it has one; a request refused before it got one has none. A refusal
 * or failure carries its `code` and the `error` to answer with (message, field, Retry-After).
 */
export type Outcome =
  | { kind: 'sent'; id: string }
  | { kind: 'queued'; id: string; members?: number | undefined }
  | NotDelivered<'refused'>
  | NotDelivered<'failed'>;

interface NotDelivered<K extends 'refused' | 'failed'> {
  kind: K;
  id: string | undefined;
  code: ErrorCode;
  error: HeraldError;
}

export type OutcomeKind = Outcome['kind'];

export function sent(id: string): Outcome {
  return { kind: 'sent', id };
}

export function queued(id: string): Outcome {
  return { kind: 'queued', id };
}

/**
 * A topic event (issue 44) durably accepted: its fan-out's chunks are stored; `members` copies
 * follow. Counted as `queued` (202), answered `accepted` with the members.
 */
export function fanout(id: string, members: number): Outcome {
  return { kind: 'queued', id, members };
}

/** A refusal or a failure, told apart by the error's status: 4xx and 507 refuse, the rest fail. */
export function notDelivered(error: HeraldError, id?: string): Outcome {
  return error.status < 500 || error.status === 507
    ? { kind: 'refused', id, code: error.code, error }
    : { kind: 'failed', id, code: error.code, error };
}

export type DispatchBody = NotifyAccepted | NotifyFailed | NotifyRefused;

/** An outcome as an HTTP route answers it; a NATS reply carries the same plus `http_status`. */
export interface HttpAnswer {
  status: number;
  body: DispatchBody;
  /** Seconds; becomes the Retry-After header (HTTP) or reply header (NATS). */
  retryAfter?: number;
}

/**
 * Seconds a sender is told to wait after a 503 `unavailable` that names no other time. Every such
 * refusal is transient (NATS, JetStream or auth coming back), so it always says when to retry.
 */
export const UNAVAILABLE_RETRY_AFTER_S = 1;

/** The HTTP status of an outcome. */
export function httpStatus(outcome: Outcome): number {
  return outcome.kind === 'sent' ? 200 : outcome.kind === 'queued' ? 202 : outcome.error.status;
}

/**
 * The one mapping of an outcome to HTTP, for the HTTP routes and the NATS replies: 200 and 202
 * with the contract's status text and the id; a 503 `unavailable` is the contract's failed body
 * (its status text plus the error) and always says when to retry; any other refusal or failure
 * is the error body.
 */
export function toHttp(outcome: Outcome): HttpAnswer {
  if (outcome.kind === 'sent') {
    return { status: 200, body: { status: DispatchStatus.sent, id: outcome.id } };
  }
  if (outcome.kind === 'queued') {
    if (outcome.members !== undefined) {
      const body = { status: DispatchStatus.accepted, id: outcome.id, members: outcome.members };
      return { status: 202, body };
    }
    return { status: 202, body: { status: DispatchStatus.queued, id: outcome.id } };
  }
  const { error } = outcome;
  if (error.code === 'unavailable') {
    return {
      status: error.status,
      body: { status: DispatchStatus.failed, error: error.toBody().error },
      retryAfter: error.retryAfter ?? UNAVAILABLE_RETRY_AFTER_S,
    };
  }
  return {
    status: error.status,
    body: error.toBody(),
    ...(error.retryAfter === undefined ? {} : { retryAfter: error.retryAfter }),
  };
}

/**
 * The outcome an HTTP answer stands for: how an answer stored under an Idempotency-Key (kept in
 * its HTTP form, which every instance reads) is replayed.
 */
export function outcomeOfHttp(status: number, body: DispatchBody): Outcome {
  if ('error' in body) return notDelivered(HeraldError.fromBody(body.error as ErrorBody['error']));
  if (status === 200) return sent(body.id);
  return body.members === undefined ? queued(body.id) : fanout(body.id, body.members);
}

import {
  DispatchStatus,
  HeraldError,
  type NotifyAccepted,
  type NotifyFailed,
  type NotifyRefused,
} from '@herald/proto';

export type DispatchBody = NotifyAccepted | NotifyFailed | NotifyRefused;

/** What a dispatch answers, whichever transport carried it. */
export interface DispatchResult {
  status: number;
  body: DispatchBody;
  /** Seconds; becomes the Retry-After header (HTTP) or reply header (NATS). */
  retryAfter?: number;
}

export function sent(id: string): DispatchResult {
  return { status: 200, body: { status: DispatchStatus.sent, id } };
}

export function queued(id: string): DispatchResult {
  return { status: 202, body: { status: DispatchStatus.queued, id } };
}

/**
 * Seconds a sender is told to wait after a 503 `unavailable` that names no other time. Every such
 * refusal is transient (NATS, JetStream or auth coming back), so it always says when to retry.
 */
export const UNAVAILABLE_RETRY_AFTER_S = 1;

/** The contract's 503 body: the failed status plus the error saying why, and when to retry. */
export function failed(err: HeraldError): DispatchResult {
  return {
    status: err.status,
    body: { status: DispatchStatus.failed, error: err.toBody().error },
    retryAfter: err.retryAfter ?? UNAVAILABLE_RETRY_AFTER_S,
  };
}

export function fromError(err: HeraldError): DispatchResult {
  if (err.code === 'unavailable') return failed(err);
  return {
    status: err.status,
    body: err.toBody(),
    ...(err.retryAfter === undefined ? {} : { retryAfter: err.retryAfter }),
  };
}

/** The answer of a step that refuses without throwing (its result may be remembered for replays). */
export function errorResult(...args: ConstructorParameters<typeof HeraldError>): DispatchResult {
  return fromError(new HeraldError(...args));
}

import { type Answer, NatsRequester } from '@herald/nats';
import {
  type StatusQuery,
  StatusReply,
  StatusTrimReply,
  type StatusTrimRequest,
  subjects,
} from '@herald/proto';
import type { NatsConnection } from 'nats';

/** A query the status service answered. */
export type StatusAnswer = Answer<StatusReply>;
/** A trim the status service did: the rows it deleted. */
export type TrimAnswer = Answer<StatusTrimReply>;

const TRIM: StatusTrimRequest = { v: 1 };

/**
 * Asks the status service over NATS (`rt.statusapi.query`, `rt.statusapi.trim`), as
 * `@herald/access`'s KeyVerifier asks auth. One client per caller; the requests share its muxed
 * requester. Each resolves with the answer or rejects with a HeraldError: the service's refusal
 * with its code, or `unavailable` when it does not answer (or cannot: its store is down).
 */
export class StatusClient {
  readonly #requester: NatsRequester;

  constructor(nc: NatsConnection) {
    this.#requester = new NatsRequester(nc);
  }

  /**
   * One query. The account is always the caller's to name from what it verified (a session, a
   * key), never from a request: the status service never answers across accounts. No answer in
   * time is 503 `unavailable` with `unavailable` as its message (what that means for the caller)
   * and Retry-After 1.
   */
  async query(
    query: StatusQuery,
    opts: { timeoutMs: number; unavailable: string },
  ): Promise<StatusAnswer> {
    return this.#requester.requestJson(subjects.statusQuery, query, StatusReply, opts.timeoutMs, {
      message: opts.unavailable,
      retryAfter: 1,
    });
  }

  /** Asks the status service to delete its rows older than its window (STATUS_RETENTION_DAYS). */
  async trim(timeoutMs: number): Promise<TrimAnswer> {
    return this.#requester.requestJson(subjects.statusTrim, TRIM, StatusTrimReply, timeoutMs);
  }
}

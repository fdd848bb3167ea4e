import { NatsRequester, type RequestOutcome, replyJson } from '@herald/nats';
import {
  HeraldError,
  type StatusQuery,
  StatusReply,
  StatusTrimReply,
  type StatusTrimRequest,
  subjects,
} from '@herald/proto';
import type { NatsConnection } from 'nats';

/** A query the status service answered. */
export type StatusAnswer = Extract<StatusReply, { ok: true }>;

/** How a trim request went: answered (with the reply, or undefined when it was not one), or not. */
export type TrimOutcome =
  | { answered: true; reply: StatusTrimReply | undefined }
  | { answered: false; outcome: Exclude<RequestOutcome['kind'], 'reply'> };

const utf8 = new TextEncoder();

/**
 * Asks the status service over NATS (`rt.statusapi.query`, `rt.statusapi.trim`), as
 * `@herald/access`'s KeyVerifier asks auth. One client per caller; the requests share its muxed
 * requester.
 */
export class StatusClient {
  readonly #requester: NatsRequester;

  constructor(nc: NatsConnection) {
    this.#requester = new NatsRequester(nc);
  }

  /**
   * One query. The account is always the caller's to name from what it verified (a session, a
   * key), never from a request: the status service never answers across accounts. Throws 503
   * `unavailable` with `unavailable` as its message (what that means for the caller) when the
   * service does not answer in time, or answers an error.
   */
  async query(
    query: StatusQuery,
    opts: { timeoutMs: number; unavailable: string },
  ): Promise<StatusAnswer> {
    const outcome = await this.#requester.request(
      subjects.statusQuery,
      utf8.encode(JSON.stringify(query)),
      undefined,
      opts.timeoutMs,
    );
    const reply =
      outcome.kind === 'reply' ? StatusReply.safeParse(replyJson(outcome.msg)) : undefined;
    if (!reply?.success || !reply.data.ok) {
      throw new HeraldError('unavailable', opts.unavailable, { retryAfter: 1 });
    }
    return reply.data;
  }

  /** Asks the status service to delete its rows older than its window (STATUS_RETENTION_DAYS). */
  async trim(timeoutMs: number): Promise<TrimOutcome> {
    const request: StatusTrimRequest = { v: 1 };
    const outcome = await this.#requester.request(
      subjects.statusTrim,
      utf8.encode(JSON.stringify(request)),
      undefined,
      timeoutMs,
    );
    if (outcome.kind !== 'reply') return { answered: false, outcome: outcome.kind };
    const reply = StatusTrimReply.safeParse(replyJson(outcome.msg));
    return { answered: true, reply: reply.success ? reply.data : undefined };
  }
}

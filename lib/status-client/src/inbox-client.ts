import { NatsRequester, replyJson } from '@herald/nats';
import {
  errorOfReply,
  HeraldError,
  InboxExpireReply,
  type InboxExpireRequest,
  type InboxQuery,
  InboxQueryReply,
  InboxStoreReply,
  type InboxStoreRequest,
  subjects,
} from '@herald/proto';
import type { NatsConnection } from 'nats';

export type InboxStoreAnswer = Extract<InboxStoreReply, { ok: true }>;
export type InboxQueryAnswer = Extract<InboxQueryReply, { ok: true }>;

const utf8 = new TextEncoder();

/**
 * The inbox store's client side (the status service, `rt.inboxapi.*`, proto/inbox.ts). The
 * account is always the caller's to name from what it verified (a key), never from a request:
 * it is the subject's token, and the store answers only that account's inboxes.
 */
export class InboxClient {
  readonly #requester: NatsRequester;

  constructor(nc: NatsConnection) {
    this.#requester = new NatsRequester(nc);
  }

  /**
   * Keeps events before the sender is answered: one result per event (`{seq}` or its refusal).
   * Throws 503 `unavailable` when the store does not answer, or fails the whole request: then
   * nothing of it may be treated as accepted.
   */
  async store(
    account: string,
    request: InboxStoreRequest,
    timeoutMs: number,
  ): Promise<InboxStoreAnswer> {
    const outcome = await this.#requester.request(
      subjects.inboxStore(account),
      utf8.encode(JSON.stringify(request)),
      undefined,
      timeoutMs,
    );
    const reply =
      outcome.kind === 'reply' ? InboxStoreReply.safeParse(replyJson(outcome.msg)) : undefined;
    if (!reply?.success || !reply.data.ok) {
      throw new HeraldError(
        'unavailable',
        'The inbox store is unavailable: nothing was accepted, retry shortly',
        { retryAfter: 1 },
      );
    }
    return reply.data;
  }

  /**
   * One query of a recipient's inbox. Throws the store's own refusal (`invalid_field` naming the
   * field) as is, and 503 `unavailable` when the store does not answer or fails.
   */
  async query(account: string, query: InboxQuery, timeoutMs: number): Promise<InboxQueryAnswer> {
    const outcome = await this.#requester.request(
      subjects.inboxQuery(account),
      utf8.encode(JSON.stringify(query)),
      undefined,
      timeoutMs,
    );
    const reply =
      outcome.kind === 'reply' ? InboxQueryReply.safeParse(replyJson(outcome.msg)) : undefined;
    if (reply?.success && reply.data.ok) return reply.data;
    if (reply?.success && !reply.data.ok && reply.data.error.code !== 'unavailable') {
      throw errorOfReply(reply.data);
    }
    throw new HeraldError('unavailable', 'The inbox store is unavailable: retry shortly', {
      retryAfter: 1,
    });
  }

  /** Retention's request: remove the expired, settled inbox events. */
  async expire(
    timeoutMs: number,
  ): Promise<{ answered: true; reply: InboxExpireReply | undefined } | { answered: false }> {
    const request: InboxExpireRequest = { v: 1 };
    const outcome = await this.#requester.request(
      subjects.inboxExpire,
      utf8.encode(JSON.stringify(request)),
      undefined,
      timeoutMs,
    );
    if (outcome.kind !== 'reply') return { answered: false };
    const reply = InboxExpireReply.safeParse(replyJson(outcome.msg));
    return { answered: true, reply: reply.success ? reply.data : undefined };
  }
}

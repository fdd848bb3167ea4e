import { type Answer, NatsRequester, type NoAnswer } from '@herald/nats';
import {
  InboxExpireReply,
  type InboxExpireRequest,
  type InboxQuery,
  InboxQueryReply,
  InboxStoreReply,
  type InboxStoreRequest,
  subjects,
} from '@herald/proto';
import type { NatsConnection } from 'nats';

export type InboxStoreAnswer = Answer<InboxStoreReply>;
export type InboxQueryAnswer = Answer<InboxQueryReply>;
export type InboxExpireAnswer = Answer<InboxExpireReply>;

const EXPIRE: InboxExpireRequest = { v: 1 };
const STORE_UNAVAILABLE: NoAnswer = {
  message: 'The inbox store is unavailable: nothing was accepted, retry shortly',
  retryAfter: 1,
};
const QUERY_UNAVAILABLE: NoAnswer = {
  message: 'The inbox store is unavailable: retry shortly',
  retryAfter: 1,
};

/**
 * The inbox store's client side (the status service, `rt.inboxapi.*`, proto/inbox.ts). The
 * account is always the caller's to name from what it verified (a key), never from a request:
 * it is the subject's token, and the store answers only that account's inboxes. Each request
 * resolves with the answer or rejects with a HeraldError: the store's refusal with its code
 * (`invalid_field` naming the field), or 503 `unavailable` when it does not answer or cannot.
 */
export class InboxClient {
  readonly #requester: NatsRequester;

  constructor(nc: NatsConnection) {
    this.#requester = new NatsRequester(nc);
  }

  /**
   * Keeps events before the sender is answered: one result per event (`{seq}` or its refusal).
   * Any rejection means nothing of the request may be treated as accepted.
   */
  async store(
    account: string,
    request: InboxStoreRequest,
    timeoutMs: number,
  ): Promise<InboxStoreAnswer> {
    return this.#requester.requestJson(
      subjects.inboxStore(account),
      request,
      InboxStoreReply,
      timeoutMs,
      STORE_UNAVAILABLE,
    );
  }

  /** One query of a recipient's inbox. */
  async query(account: string, query: InboxQuery, timeoutMs: number): Promise<InboxQueryAnswer> {
    return this.#requester.requestJson(
      subjects.inboxQuery(account),
      query,
      InboxQueryReply,
      timeoutMs,
      QUERY_UNAVAILABLE,
    );
  }

  /** Retention's request: remove the expired, settled inbox events. */
  async expire(timeoutMs: number): Promise<InboxExpireAnswer> {
    return this.#requester.requestJson(subjects.inboxExpire, EXPIRE, InboxExpireReply, timeoutMs);
  }
}

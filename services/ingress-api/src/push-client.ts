import { type Answer, NatsRequester, type ReplySchema } from '@herald/nats';
import {
  PUSH_API_SUBJECT,
  type PushRequest,
  PushSubscribeReply,
  PushSubscriptionReply,
  PushVapidReply,
  type WebPushSubscription,
} from '@herald/proto';
import type { NatsConnection } from 'nats';

type ReplyOf<S> = S extends ReplySchema<infer T> ? T : never;

/** What a caller of `/push/*` is told while the status service does not answer (503). */
const UNAVAILABLE =
  'The push service (the status service) did not answer: retry shortly (event delivery is not affected)';

/**
 * The push operations ingress asks of the status service (`rt.pushapi.request`, proto/push.ts),
 * each for the account of a key ingress verified: never an account a caller names. Resolves with
 * the answer or rejects with a HeraldError: the service's refusal with its code (`not_found`: 404),
 * or 503 `unavailable` (Retry-After 1) when it does not answer within `timeoutMs`.
 */
export class PushClient {
  readonly #requester: NatsRequester;
  readonly #timeoutMs: number;

  constructor(nc: NatsConnection, timeoutMs: number) {
    this.#requester = new NatsRequester(nc);
    this.#timeoutMs = timeoutMs;
  }

  vapidPublicKey(account: string): Promise<Answer<ReplyOf<typeof PushVapidReply>>> {
    return this.#ask({ v: 1, op: 'vapid-public-key', account_id: account }, PushVapidReply);
  }

  subscribe(request: {
    account: string;
    keyId: string;
    recipient: string;
    device: string | undefined;
    subscription: WebPushSubscription;
  }): Promise<Answer<ReplyOf<typeof PushSubscribeReply>>> {
    const op: PushRequest = {
      v: 1,
      op: 'subscribe',
      account_id: request.account,
      key_id: request.keyId,
      recipient: request.recipient,
      kind: 'webpush',
      subscription: request.subscription,
    };
    if (request.device !== undefined) op.device = request.device;
    return this.#ask(op, PushSubscribeReply);
  }

  /** Deletes the subscription `id` only if it is `account`'s and `recipient`'s (else not_found). */
  unsubscribe(
    account: string,
    id: string,
    recipient: string,
  ): Promise<Answer<ReplyOf<typeof PushSubscriptionReply>>> {
    return this.#ask(
      { v: 1, op: 'unsubscribe', account_id: account, id, recipient },
      PushSubscriptionReply,
    );
  }

  #ask<T>(request: PushRequest, schema: ReplySchema<T>): Promise<Answer<T>> {
    return this.#requester.requestJson(PUSH_API_SUBJECT, request, schema, this.#timeoutMs, {
      message: UNAVAILABLE,
      retryAfter: 1,
    });
  }
}

import { type Answer, NatsRequester, type ReplySchema } from '@herald/nats';
import {
  WEBHOOK_API_SUBJECT,
  WebhookAttemptsReply,
  WebhookEndpointReply,
  type WebhookEventType,
  WebhookListReply,
  WebhookQueuedReply,
  type WebhookRequest,
  WebhookSecretReply,
} from '@herald/proto';
import type { NatsConnection } from 'nats';

/** What a reply schema reads (its type, where proto exports only the schema). */
type ReplyOf<S> = S extends ReplySchema<infer T> ? T : never;

/** `create` and `rotate-secret`: the endpoint and its secret, shown this once. */
export type WebhookSecretAnswer = Answer<ReplyOf<typeof WebhookSecretReply>>;
export type WebhookEndpointAnswer = Answer<ReplyOf<typeof WebhookEndpointReply>>;
export type WebhookListAnswer = Answer<ReplyOf<typeof WebhookListReply>>;
export type WebhookAttemptsAnswer = Answer<ReplyOf<typeof WebhookAttemptsReply>>;
/** `test` (its message id) and `replay` (how many messages were queued). */
export type WebhookQueuedAnswer = Answer<ReplyOf<typeof WebhookQueuedReply>>;

/** What no answer on the subject is, in words its callers (the admin CLI, the account API) show. */
export const WEBHOOK_API_UNAVAILABLE =
  'status service unavailable: nothing answered rt.webhookapi.request, so webhook endpoints cannot be managed right now; check that the status service runs and reaches NATS, then retry';

/**
 * Manages an account's webhook endpoints through the status service, which keeps them
 * (`rt.webhookapi.request`, proto/src/webhooks.ts). Each call resolves with the answer or rejects
 * with a HeraldError: the service's refusal with its code, message and field (`not_found` naming
 * `id`, `invalid_field` naming `url`), or `unavailable` ({@link WEBHOOK_API_UNAVAILABLE}, Retry-After
 * 1) when it does not answer within `timeoutMs`. `account` scopes a call to one account (the
 * account API always sends it: another account's endpoint is `not_found`); the admin CLI, the
 * operator's tool, leaves it out where a command names an endpoint by id.
 */
export class WebhookClient {
  readonly #requester: NatsRequester;
  readonly #timeoutMs: number;

  constructor(nc: NatsConnection, timeoutMs: number) {
    this.#requester = new NatsRequester(nc);
    this.#timeoutMs = timeoutMs;
  }

  create(
    account: string,
    url: string,
    events?: readonly WebhookEventType[],
  ): Promise<WebhookSecretAnswer> {
    const request: WebhookRequest = { v: 1, op: 'create', account_id: account, url };
    if (events !== undefined) request.events = [...events];
    return this.#ask(request, WebhookSecretReply);
  }

  list(account: string): Promise<WebhookListAnswer> {
    return this.#ask({ v: 1, op: 'list', account_id: account }, WebhookListReply);
  }

  get(id: string, account?: string): Promise<WebhookEndpointAnswer> {
    return this.#ask({ v: 1, op: 'get', id, ...scope(account) }, WebhookEndpointReply);
  }

  /** Resolves with the endpoint as it was. */
  delete(id: string, account?: string): Promise<WebhookEndpointAnswer> {
    return this.#ask({ v: 1, op: 'delete', id, ...scope(account) }, WebhookEndpointReply);
  }

  /** A new secret, shown this once; the old one keeps signing beside it for the overlap. */
  rotateSecret(id: string, account?: string): Promise<WebhookSecretAnswer> {
    return this.#ask({ v: 1, op: 'rotate-secret', id, ...scope(account) }, WebhookSecretReply);
  }

  enable(id: string, account?: string): Promise<WebhookEndpointAnswer> {
    return this.#ask({ v: 1, op: 'enable', id, ...scope(account) }, WebhookEndpointReply);
  }

  /** The endpoint's recent attempts, newest first (at most `limit`, the service's default without). */
  attempts(id: string, account?: string, limit?: number): Promise<WebhookAttemptsAnswer> {
    return this.#ask(
      {
        v: 1,
        op: 'attempts',
        id,
        ...scope(account),
        ...(limit === undefined ? {} : { limit }),
      },
      WebhookAttemptsReply,
    );
  }

  /** Queues one `webhook.test` message to the endpoint. */
  test(id: string, account?: string): Promise<WebhookQueuedAnswer> {
    return this.#ask({ v: 1, op: 'test', id, ...scope(account) }, WebhookQueuedReply);
  }

  /** Queues again every transition of the account's events at or after `since` (epoch ms). */
  replay(id: string, since: number, account?: string): Promise<WebhookQueuedAnswer> {
    return this.#ask({ v: 1, op: 'replay', id, since, ...scope(account) }, WebhookQueuedReply);
  }

  #ask<T>(request: WebhookRequest, schema: ReplySchema<T>): Promise<Answer<T>> {
    return this.#requester.requestJson(WEBHOOK_API_SUBJECT, request, schema, this.#timeoutMs, {
      message: WEBHOOK_API_UNAVAILABLE,
      retryAfter: 1,
    });
  }
}

function scope(account: string | undefined): { account_id?: string } {
  return account === undefined ? {} : { account_id: account };
}

import { type Answer, NatsRequester, type ReplySchema } from '@herald/nats';
import {
  type ApnsKey,
  type DevicePushKind,
  type FcmServiceAccount,
  PUSH_API_SUBJECT,
  PushListReply,
  type PushRequest,
  PushStatusReply,
  PushSubscribeReply,
  PushSubscriptionReply,
  PushTestReply,
  PushVapidReply,
  type WebPushSubscription,
} from '@herald/proto';
import type { NatsConnection } from 'nats';

/** What a reply schema reads (its type, where proto exports only the schema). */
type ReplyOf<S> = S extends ReplySchema<infer T> ? T : never;

/** `configure-vapid` and `vapid-public-key`: the account's VAPID public key and subject. */
export type PushVapidAnswer = Answer<ReplyOf<typeof PushVapidReply>>;
export type PushStatusAnswer = Answer<ReplyOf<typeof PushStatusReply>>;
export type PushSubscribeAnswer = Answer<ReplyOf<typeof PushSubscribeReply>>;
/** `unsubscribe`: the subscription as it was. */
export type PushSubscriptionAnswer = Answer<ReplyOf<typeof PushSubscriptionReply>>;
export type PushListAnswer = Answer<ReplyOf<typeof PushListReply>>;
/** `test`: what the push service answered. */
export type PushTestAnswer = Answer<ReplyOf<typeof PushTestReply>>;

/** What no answer on the subject is, in words its callers (the admin CLI, the account API) show. */
export const PUSH_API_UNAVAILABLE =
  'status service unavailable: nothing answered rt.pushapi.request, so push credentials and subscriptions cannot be managed right now; check that the status service runs and reaches NATS, then retry';

/** A Web Push registration as ingress forwards it, after its key, Origin and token checks. */
export interface PushRegistration {
  account: string;
  keyId: string;
  recipient: string;
  device?: string | undefined;
  subscription: WebPushSubscription;
}

/** A native app's device token as ingress forwards it, after the same checks. */
export interface DeviceRegistration {
  account: string;
  keyId: string;
  recipient: string;
  device?: string | undefined;
  kind: DevicePushKind;
  token: string;
}

/**
 * An account's push credentials and subscriptions (issue 40), kept by the status service and asked
 * for over `rt.pushapi.request` (proto/src/push.ts). Every operation names its account: the service
 * answers another account's subscription as `not_found`. Each call resolves with the answer or
 * rejects with a HeraldError: the service's refusal with its code, message and field, or
 * `unavailable` ({@link PUSH_API_UNAVAILABLE}, Retry-After 1) when it does not answer within
 * `timeoutMs`.
 */
export class PushClient {
  readonly #requester: NatsRequester;
  readonly #timeoutMs: number;

  constructor(nc: NatsConnection, timeoutMs: number) {
    this.#requester = new NatsRequester(nc);
    this.#timeoutMs = timeoutMs;
  }

  /** Makes (or replaces) the account's VAPID key pair; `subject` is VAPID's `sub`. */
  configureVapid(account: string, subject?: string): Promise<PushVapidAnswer> {
    const request: PushRequest = { v: 1, op: 'configure-vapid', account_id: account };
    if (subject !== undefined) request.subject = subject;
    return this.#ask(request, PushVapidReply);
  }

  /** Stores (or replaces) the account's FCM service account; answers the credentials view. */
  configureFcm(account: string, serviceAccount: FcmServiceAccount): Promise<PushStatusAnswer> {
    return this.#ask(
      { v: 1, op: 'configure-fcm', account_id: account, service_account: serviceAccount },
      PushStatusReply,
    );
  }

  /** Stores (or replaces) the account's APNs token key; answers the credentials view. */
  configureApns(account: string, apns: ApnsKey): Promise<PushStatusAnswer> {
    return this.#ask({ v: 1, op: 'configure-apns', account_id: account, apns }, PushStatusReply);
  }

  status(account: string): Promise<PushStatusAnswer> {
    return this.#ask({ v: 1, op: 'status', account_id: account }, PushStatusReply);
  }

  vapidPublicKey(account: string): Promise<PushVapidAnswer> {
    return this.#ask({ v: 1, op: 'vapid-public-key', account_id: account }, PushVapidReply);
  }

  subscribe(r: PushRegistration): Promise<PushSubscribeAnswer> {
    return this.#ask(
      {
        v: 1,
        op: 'subscribe',
        account_id: r.account,
        key_id: r.keyId,
        recipient: r.recipient,
        ...(r.device === undefined ? {} : { device: r.device }),
        kind: 'webpush',
        subscription: r.subscription,
      },
      PushSubscribeReply,
    );
  }

  subscribeDevice(r: DeviceRegistration): Promise<PushSubscribeAnswer> {
    return this.#ask(
      {
        v: 1,
        op: 'subscribe-device',
        account_id: r.account,
        key_id: r.keyId,
        recipient: r.recipient,
        ...(r.device === undefined ? {} : { device: r.device }),
        kind: r.kind,
        token: r.token,
      },
      PushSubscribeReply,
    );
  }

  /** Resolves with the subscription as it was; with `recipient`, only that recipient's. */
  unsubscribe(account: string, id: string, recipient?: string): Promise<PushSubscriptionAnswer> {
    return this.#ask(
      {
        v: 1,
        op: 'unsubscribe',
        account_id: account,
        id,
        ...(recipient === undefined ? {} : { recipient }),
      },
      PushSubscriptionReply,
    );
  }

  /** The account's subscriptions, or one recipient's. */
  list(account: string, recipient?: string): Promise<PushListAnswer> {
    return this.#ask(
      { v: 1, op: 'list', account_id: account, ...(recipient === undefined ? {} : { recipient }) },
      PushListReply,
    );
  }

  /** Sends a test push to one subscription now. */
  test(account: string, id: string): Promise<PushTestAnswer> {
    return this.#ask({ v: 1, op: 'test', account_id: account, id }, PushTestReply);
  }

  #ask<T>(request: PushRequest, schema: ReplySchema<T>): Promise<Answer<T>> {
    return this.#requester.requestJson(PUSH_API_SUBJECT, request, schema, this.#timeoutMs, {
      message: PUSH_API_UNAVAILABLE,
      retryAfter: 1,
    });
  }
}

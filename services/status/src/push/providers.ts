import type { SecretBox } from '@herald/kit';
import type { OutboundClient, Resolver } from '@herald/outbound';
import type { PushMessage } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { PushSubscriptionRow, StatusDb } from '../db-schema.js';
import { ApnsSender } from './apns.js';
import { openVapid, type Vapid } from './credentials.js';
import { FcmSender } from './fcm.js';
import { type NativeCredentials, openNative } from './native-credentials.js';
import { type SendResult, sendWebPush } from './send.js';

/** An account's credentials for every provider, open (a provider undefined when unconfigured). */
export interface AccountCredentials extends NativeCredentials {
  webpush: Vapid | undefined;
}

export interface ProviderSettings {
  fcmOrigin: string;
  fcmTokenUri: string;
  apnsOrigin: string;
  apnsSandboxOrigin: string;
  allowPrivate: boolean;
  ca: string[] | undefined;
  timeoutMs: number;
  maxResponseBytes: number;
  resolver?: Resolver;
}

/** What a device subscription's `endpoint` holds: `kind:token`. */
export const deviceEndpoint = (kind: string, token: string) => `${kind}:${token}`;
const deviceToken = (row: { kind: string; endpoint: string }) =>
  row.endpoint.slice(row.kind.length + 1);

/**
 * Sends one push to one subscription by its kind: Web Push (web-push through the outbound
 * client), FCM HTTP v1 or APNs. FCM and APNs get the event's payload only when the key opted in
 * (`include_payload`); Web Push always (it is encrypted end to end).
 */
export class PushProviders {
  readonly #db: Kysely<StatusDb>;
  readonly #box: SecretBox | undefined;
  readonly #client: OutboundClient;
  readonly #fcm: FcmSender;
  readonly #apns: ApnsSender;

  constructor(
    db: Kysely<StatusDb>,
    box: SecretBox | undefined,
    client: OutboundClient,
    s: ProviderSettings,
  ) {
    this.#db = db;
    this.#box = box;
    this.#client = client;
    this.#fcm = new FcmSender(client, { origin: s.fcmOrigin, tokenUri: s.fcmTokenUri });
    this.#apns = new ApnsSender({
      origin: s.apnsOrigin,
      sandboxOrigin: s.apnsSandboxOrigin,
      allowPrivate: s.allowPrivate,
      ca: s.ca,
      timeoutMs: s.timeoutMs,
      maxResponseBytes: s.maxResponseBytes,
      ...(s.resolver ? { resolver: s.resolver } : {}),
    });
  }

  async credentials(account: string): Promise<AccountCredentials> {
    const [webpush, native] = await Promise.all([
      openVapid(this.#db, this.#box, account),
      openNative(this.#db, this.#box, account),
    ]);
    return { webpush, ...native };
  }

  /** Whether `creds` can push to a subscription of `kind`. */
  static configured(creds: AccountCredentials, kind: string): boolean {
    return kind === 'webpush' || kind === 'fcm' || kind === 'apns'
      ? creds[kind] !== undefined
      : false;
  }

  async send(
    account: string,
    sub: PushSubscriptionRow,
    creds: AccountCredentials,
    msg: PushMessage,
    includePayload: boolean,
    ttlS: number,
    signal?: AbortSignal,
  ): Promise<SendResult> {
    const native = includePayload ? msg : withoutPayload(msg);
    if (sub.kind === 'fcm' && creds.fcm)
      return this.#fcm.send(account, creds.fcm, deviceToken(sub), native, ttlS, signal);
    if (sub.kind === 'apns' && creds.apns)
      return this.#apns.send(account, creds.apns, deviceToken(sub), native, ttlS, signal);
    if (sub.kind === 'webpush' && creds.webpush)
      return sendWebPush(this.#client, sub, creds.webpush, msg, ttlS, signal);
    return {
      status: null,
      retryAfter: undefined,
      error: `the account has no ${sub.kind} credentials`,
      failure: 'refused',
      latencyMs: 0,
    };
  }

  close(): void {
    this.#apns.close();
    this.#client.close();
  }
}

function withoutPayload(msg: PushMessage): PushMessage {
  const { payload: _p, ...rest } = msg;
  return rest;
}

/** The configuration alarm a refusal of `kind` raises, in words an operator acts on. */
export function alarmText(kind: string): string {
  if (kind === 'fcm')
    return 'push refused by FCM (configuration alarm: check the account service account, its project and FCM_ORIGIN/FCM_TOKEN_URI)';
  if (kind === 'apns')
    return 'push refused by APNs (configuration alarm: check the account APNs key, key id, team id, topic and --apns-sandbox)';
  return 'push refused by the push service (configuration alarm: check the account VAPID key and subject)';
}

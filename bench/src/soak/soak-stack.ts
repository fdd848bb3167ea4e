import { randomUUID } from 'node:crypto';
import {
  type PushService,
  post,
  type ServiceName,
  type Tenants,
  type TestWebPushSubscription,
  type WebhookReceiver,
} from '@herald/testkit';
import type { NatsConnection } from 'nats';
import { createEndpoint } from '../figures/webhook-endpoint.js';
import type { Key } from './load.js';
import type { Probe } from './sampler.js';

/** Every long-running Herald process, as `make dev` and the compose stack run them. */
export const SERVICES: ServiceName[] = [
  'auth',
  'ingress-api',
  'socket-edge',
  'status',
  'retention',
];
/** The webhook receiver's path: the main account's endpoint, subscribed to every type. */
export const WEBHOOK_PATH = '/soak';
/**
 * The push key's window (`--push-after-ms`): an event no socket of its recipient proved within it
 * goes to the recipient's Web Push subscription.
 */
export const PUSH_AFTER_MS = 1000;

/** The two processes the run restarts at its fault points (their names in the samples). */
export type Restartable = 'socket-edge' | 'nats-server';

/** What the run needs of a stack, whichever target started it (dev-stack.ts, compose-stack.ts). */
export interface SoakStack {
  /** The target in a sentence, for the summary. */
  describe: string;
  /** `https://…` of ingress-api. */
  baseUrl: string;
  /** `wss://…` of socket-edge. */
  wsUrl: string;
  /** PEM of the CA the stack's listeners chain to. */
  ca: string;
  /** Restarts one process as the target restarts it; resolves once it was started again. */
  restart(process: Restartable): Promise<void>;
  /** The operator's connection (rt.dispatch, the KV and the webhook API), reconnecting forever. */
  nc: NatsConnection;
  /** nats-server's monitoring port (`/varz`, `/jsz`, `/connz`). */
  monitorUrl: string;
  receiver: WebhookReceiver;
  /** The Web Push service the push key's subscriptions name (decrypts and verifies every push). */
  pushService: PushService;
  main: Key;
  inbox: Key;
  /** A key with the push fallback after PUSH_AFTER_MS, its account's VAPID key made. */
  push: Key;
  /** Subscribes a recipient of the push key at the push service (POST /push/subscriptions). */
  subscribePush(recipient: string): Promise<TestWebPushSubscription>;
  probes: Probe[];
  stop(): Promise<void>;
}

/** The run's tenants, made on a started stack the same way on every target. */
export type SoakTenants = Pick<SoakStack, 'main' | 'inbox' | 'push' | 'subscribePush'>;

/**
 * An account with a mobile key and a webhook endpoint at `receiver` (every type), an account with
 * an inbox key, and an account with a push key (its VAPID key made): every key a Test key, made
 * through `t` (the account API, or the admin CLI for an account on `plan`).
 */
export async function makeTenants(o: {
  t: Pick<Tenants, 'createAccount' | 'createKey' | 'admin'>;
  /** A paid plan of the stack's catalogue: accounts made with the admin CLI. Default: signup. */
  plan?: string;
  baseUrl: string;
  ca: string;
  nc: NatsConnection;
  receiver: WebhookReceiver;
  pushService: PushService;
}): Promise<SoakTenants> {
  const tenant = async (opts: { inboxDays?: number; push?: boolean } = {}): Promise<Key> => {
    const { id } = await o.t.createAccount({
      email: `soak-${randomUUID()}@soak.herald`,
      ...(o.plan === undefined ? {} : { plan: o.plan }),
    });
    if (opts.push) {
      await o.t.admin([
        'push',
        'configure',
        '--account',
        id,
        '--vapid',
        'generate',
        '--vapid-subject',
        'mailto:soak@soak.herald',
        '--json',
      ]);
    }
    const key = await o.t.createKey({
      account: id,
      kind: 'test',
      client: 'mobile',
      ...(opts.inboxDays === undefined ? {} : { inboxDays: opts.inboxDays }),
      ...(opts.push ? { push: { afterMs: PUSH_AFTER_MS } } : {}),
    });
    return { account: id, apiKey: key.key };
  };
  const main = await tenant();
  const inbox = await tenant({ inboxDays: 7 });
  const push = await tenant({ push: true });
  await createEndpoint(o.nc, main.account, o.receiver.url(WEBHOOK_PATH));
  const subscribePush = async (recipient: string) => {
    const subscription = o.pushService.subscribe();
    const res = await post(
      o.baseUrl,
      o.ca,
      { api_key: push.apiKey, recipient, client: 'mobile', kind: 'webpush', subscription },
      { path: '/push/subscriptions' },
    );
    if (res.status !== 201)
      throw new Error(`POST /push/subscriptions answered ${res.status}: ${res.text}`);
    return subscription;
  };
  return { main, inbox, push, subscribePush };
}

import { randomBytes, randomUUID } from 'node:crypto';
import {
  PushService,
  post,
  type ServiceName,
  type Stack,
  startStack,
  type TestWebPushSubscription,
  WebhookReceiver,
} from '@herald/testkit';
import { connect, type NatsConnection } from 'nats';
import { pidListeningOn } from '../env/pinning.js';
import { createEndpoint } from '../figures/webhook-endpoint.js';
import type { Key } from './load.js';
import { natsProbe, type Probe, postgresProbe, serviceProbe } from './sampler.js';

/** Every long-running process of `make dev`, as the test kit starts them. */
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

export interface SoakStack {
  stack: Stack;
  /** The operator's connection (rt.dispatch, the KV and the webhook API), reconnecting forever. */
  nc: NatsConnection;
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

/**
 * The whole stack as `make dev` runs it, started by the test kit on free ports (a private
 * nats-server with its monitoring port, Postgres, a throwaway CA), with a local webhook receiver
 * the status service trusts; an account with a mobile key and a webhook endpoint, and an account
 * with an inbox key; a probe for every process.
 */
export async function startSoakStack(): Promise<SoakStack> {
  const receiver = await WebhookReceiver.start();
  const pushService = await PushService.start();
  let stack: Stack | undefined;
  let nc: NatsConnection | undefined;
  const stop = async () => {
    await nc?.close().catch(() => undefined);
    await stack?.stop();
    await receiver.stop();
    await pushService.stop();
  };
  try {
    stack = await startStack({
      services: SERVICES,
      natsMonitor: true,
      env: {
        status: {
          WEBHOOK_ALLOW_PRIVATE: 'true',
          WEBHOOK_CA_FILE: receiver.caFile,
          // Seals the endpoint's signing secret at rest, as the operator's deploy does.
          WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
          // The push service is on 127.0.0.1: allowed as `make dev` allows it.
          PUSH_ALLOW_PRIVATE: 'true',
          PUSH_CA_FILE: pushService.caFile,
        },
      },
    });
    const s = stack;
    const monitorUrl = s.nats.monitorUrl;
    if (!monitorUrl)
      throw new Error('the soak needs nats-server as a local binary (its monitoring port)');
    // A NATS restart is part of the run: never give up reconnecting.
    nc = await connect({
      ...s.nats.connectOptions(),
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    const tenant = async (opts: { inboxDays?: number; push?: boolean } = {}): Promise<Key> => {
      const { id } = await s.createAccount({ email: `soak-${randomUUID()}@soak.herald` });
      if (opts.push) {
        await s.admin([
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
      const key = await s.createKey({
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
    const subscribePush = async (recipient: string) => {
      const subscription = pushService.subscribe();
      const res = await post(
        s.baseUrl,
        s.ca,
        { api_key: push.apiKey, recipient, client: 'mobile', kind: 'webpush', subscription },
        { path: '/push/subscriptions' },
      );
      if (res.status !== 201)
        throw new Error(`POST /push/subscriptions answered ${res.status}: ${res.text}`);
      return subscription;
    };
    await createEndpoint(nc, main.account, receiver.url(WEBHOOK_PATH));
    const pgPid = await pidListeningOn(Number(new URL(s.databaseUrl).port));
    const probes: Probe[] = [
      ...SERVICES.map((name) => serviceProbe(name, () => s.opsPorts[name])),
      natsProbe(monitorUrl, () => s.nats.pid?.()),
      ...(pgPid === undefined ? [] : [postgresProbe(pgPid)]),
    ];
    return {
      stack: s,
      nc,
      monitorUrl,
      receiver,
      pushService,
      main,
      inbox,
      push,
      subscribePush,
      probes,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

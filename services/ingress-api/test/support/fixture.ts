import { randomUUID } from 'node:crypto';
import { createLogger, serve } from '@herald/kit';
import { EventHeaders, subjects } from '@herald/proto';
import { queueStreamOf } from '@herald/queue';
import { type NatsServer, startNatsServer } from '@herald/testkit';
import {
  connect,
  type JetStreamManager,
  type MsgRequest,
  type NatsConnection,
  type StoredMsg,
  type Subscription,
} from 'nats';
import { createIngress, type Ingress, type IngressConfig, loadConfig } from '../../src/index.js';
import { ACCOUNT_A, KEYS, startAuthResponder } from './auth-responder.js';

export interface IngressFixture {
  nats: NatsServer;
  /** The ingress's own connection. */
  nc: NatsConnection;
  /** A second connection, for the auth stand-in, edge stand-ins and inspecting the stream. */
  peer: NatsConnection;
  jsm: JetStreamManager;
  config: IngressConfig;
  ingress: Ingress;
  baseUrl: string;
  /** The ops listener's port (/metrics, /readyz with its checks). */
  opsPort: number;
  stop(): Promise<void>;
}

/** Test settings: plain HTTP on 127.0.0.1 (the TLS listener has its own test), quiet logs. */
export function testConfig(
  nats: Pick<NatsServer, 'env'>,
  env: Record<string, string> = {},
): IngressConfig {
  return loadConfig({
    // NATS_URL and ingress's own NATS user, for what connects from the config.
    ...nats.env('ingress-api'),
    TLS_DISABLED: 'true',
    HOST: '127.0.0.1',
    OPS_PORT: '0',
    LOG_LEVEL: 'silent',
    ...env,
  });
}

/** A private nats-server, the auth stand-in, and a started ingress on a free port. */
export async function startIngressFixture(
  env: Record<string, string> = {},
): Promise<IngressFixture> {
  const nats = await startNatsServer();
  const peer = await connect({ ...nats.connectOptions(), name: 'test-peer' });
  const auth = startAuthResponder(peer);
  const nc = await connect({ ...nats.connectOptions('ingress-api'), name: 'test-ingress' });
  const config = testConfig(nats, env);
  const ingress = createIngress(config, { nc, logger: createLogger('ingress-api', 'silent') });
  const serving = await serve(ingress, config, 0);
  return {
    nats,
    nc,
    peer,
    jsm: await peer.jetstreamManager(),
    config,
    ingress,
    baseUrl: `http://127.0.0.1:${serving.port}`,
    opsPort: serving.opsPort,
    async stop() {
      await serving.close();
      auth.unsubscribe();
      await nc.close();
      await peer.close();
      await nats.stop();
    },
  };
}

export const newRecipient = (): string => randomUUID();

/** A valid notify body for account A's mobile key; override any field. */
export function notifyBody(
  recipient: string,
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    recipient,
    payload: { title: 'hello' },
    api_key: KEYS.mobile,
    client: 'mobile',
    ...over,
  };
}

export interface LiveDelivery {
  data: Uint8Array;
  text: string;
  id: string;
  ts: string;
}

export interface EdgeStandIn {
  received: LiveDelivery[];
  stop(): void;
}

/**
 * A plain subscriber on the recipient's live subject standing in for a socket edge (another
 * package): records each request and replies LiveReply after `delayMs`, or never when `reply` is false.
 */
export function edgeStandIn(
  nc: NatsConnection,
  recipient: string,
  opts: { account?: string; reply?: boolean; delayMs?: number } = {},
): EdgeStandIn {
  const received: LiveDelivery[] = [];
  const sub: Subscription = nc.subscribe(subjects.live(opts.account ?? ACCOUNT_A, recipient), {
    callback: (err, msg) => {
      if (err) return;
      received.push({
        data: msg.data,
        text: new TextDecoder().decode(msg.data),
        id: msg.headers?.get(EventHeaders.id) ?? '',
        ts: msg.headers?.get(EventHeaders.ts) ?? '',
      });
      if (opts.reply === false) return;
      const respond = () => msg.respond(JSON.stringify({ v: 1, sockets: 1 }));
      if (opts.delayMs) setTimeout(respond, opts.delayMs);
      else respond();
    },
  });
  return { received, stop: () => sub.unsubscribe() };
}

/** Every message stored on the recipient's queue subject, oldest first. */
export async function queuedMessages(
  jsm: JetStreamManager,
  recipient: string,
  account = ACCOUNT_A,
): Promise<StoredMsg[]> {
  const subject = subjects.queue(account, recipient);
  const out: StoredMsg[] = [];
  let seq = 1;
  for (;;) {
    try {
      // The server's MSG.GET takes next_by_subj (2.9+); nats.js 2.29's types omit it.
      const query = { next_by_subj: subject, seq } as unknown as MsgRequest;
      const msg = await jsm.streams.getMessage(queueStreamOf(account, recipient), query);
      out.push(msg);
      seq = msg.seq + 1;
    } catch {
      return out;
    }
  }
}

/** Lets in-flight NATS messages (a notice, a stray request) arrive before asserting on them. */
export async function settle(nc: NatsConnection): Promise<void> {
  await nc.flush();
}

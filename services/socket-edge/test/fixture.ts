import { randomUUID } from 'node:crypto';
import { hashKey } from '@herald/access';
import { createLogger, serve } from '@herald/kit';
import {
  type AuthInvalidate,
  type AuthVerifyReply,
  AuthVerifyRequest,
  EventHeaders,
  LiveReply,
  type PlanLimits,
  subjects,
  type VerifiedKey,
} from '@herald/proto';
import {
  ensureDevicePositionBucket,
  ensureQueueFloorBucket,
  QueueLayout,
  queueConsumerName,
  queueStreamConfig,
  queueStreamOf,
} from '@herald/queue';
import {
  freePort,
  makeCerts,
  type NatsServer,
  type ServiceProcess,
  startNatsServer,
  startServiceProcess,
  type TestCerts,
} from '@herald/testkit';
import {
  type ConsumerInfo,
  connect,
  headers,
  type JetStreamClient,
  type JetStreamManager,
  JSONCodec,
  type NatsConnection,
  type StreamConfig,
} from 'nats';
import { afterAll, beforeAll } from 'vitest';
import WebSocket from 'ws';
import { createEdge, type Edge, type EdgeDeps, loadConfig } from '../src/index.js';

const json = JSONCodec();
const text = new TextEncoder();

export const ACCOUNT_A = '0b6a5d3e-7c41-4f2a-9d0e-1a2b3c4d5e6f';
export const ACCOUNT_B = '9f8e7d6c-5b4a-4c3d-8e2f-0a1b2c3d4e5f';
export const WEB_ORIGIN = 'https://app.example.com';

/** Keys the in-test auth responder knows, by their plain value. */
export const keys = {
  mobileA: 'hk_live_mobile_account_a_0000000000000000000000',
  webA: 'hk_live_web_account_a_000000000000000000000000000',
  mobileB: 'hk_live_mobile_account_b_0000000000000000000000',
  unknown: 'hk_live_nobody_knows_this_key_000000000000000000',
  /** Account A's key with inbox mode (`inbox_days` 7). */
  inboxA: 'hk_live_inbox_account_a_00000000000000000000000',
} as const;

/** Limits roomy enough that only tests about limits ever meet them. */
export const ROOMY_LIMITS: PlanLimits = {
  connections: 10_000,
  dispatch_rate: 1000,
  dispatch_burst: 1000,
  queue_per_recipient: 10_000,
};

export function verified(
  id: string,
  account: string,
  client: 'web' | 'mobile',
  domain: string | null,
  expiresAt: number | null = null,
  over: Partial<VerifiedKey> = {},
): VerifiedKey {
  return {
    id,
    account_id: account,
    kind: 'live',
    client,
    domain,
    expires_at: expiresAt,
    plan: 'startup',
    plan_until: null,
    limits: ROOMY_LIMITS,
    ...over,
  };
}

/**
 * A tiny auth service on the real nats-server: answers `rt.auth.verify` for fixed key hashes and
 * can revoke them. A real NATS peer rather than a mock, so the edge's KeyVerifier (request,
 * timeout, cache, invalidation broadcast) runs exactly as in production; the auth service itself is
 * another engineer's and is not needed to test the edge.
 */
export class AuthResponder {
  readonly #known = new Map<string, AuthVerifyReply>();
  readonly #nc: NatsConnection;

  constructor(nc: NatsConnection) {
    this.#nc = nc;
    this.set(keys.mobileA, verified('key-mobile-a', ACCOUNT_A, 'mobile', null));
    this.set(keys.webA, verified('key-web-a', ACCOUNT_A, 'web', WEB_ORIGIN));
    this.set(keys.mobileB, verified('key-mobile-b', ACCOUNT_B, 'mobile', null));
    this.set(
      keys.inboxA,
      verified('key-inbox-a', ACCOUNT_A, 'mobile', null, null, { inbox_days: 7 }),
    );
    nc.subscribe(subjects.authVerify, {
      callback: (err, msg) => {
        if (err) return;
        const req = AuthVerifyRequest.parse(json.decode(msg.data));
        const reply: AuthVerifyReply = this.#known.get(req.key_hash) ?? {
          v: 1,
          ok: false,
          error: { code: 'invalid_api_key', message: 'api_key is not a Herald key: check it' },
        };
        msg.respond(json.encode(reply));
      },
    });
  }

  set(apiKey: string, key: VerifiedKey): void {
    this.#known.set(hashKey(apiKey), { v: 1, ok: true, key });
  }

  /** Answers verifications of this key with an error (`internal` plays an auth outage). */
  refuse(apiKey: string, code: 'key_revoked' | 'key_expired' | 'plan_inactive' | 'internal'): void {
    this.#known.set(hashKey(apiKey), {
      v: 1,
      ok: false,
      error: { code, message: `refused: ${code}` },
    });
  }

  /** Broadcasts an invalidation, as the auth service does after changing a key or an account. */
  async invalidate(msg: AuthInvalidate): Promise<void> {
    this.#nc.publish(subjects.authInvalidate, json.encode(msg));
    await this.#nc.flush();
  }

  /** Revokes a key and broadcasts the invalidation, as the auth service does. */
  async revoke(apiKey: string, keyId: string): Promise<void> {
    this.#known.set(hashKey(apiKey), {
      v: 1,
      ok: false,
      error: { code: 'key_revoked', message: 'api_key was revoked: create a new key' },
    });
    this.#nc.publish(
      subjects.authInvalidate,
      json.encode({ v: 1, key_id: keyId, reason: 'revoked' }),
    );
    await this.#nc.flush();
  }
}

/** Reconnect quickly and forever, as kit's connectNats does, so a broker restart heals within a test. */
const RECONNECT = { maxReconnectAttempts: -1, reconnectTimeWait: 200 };

export interface Stack {
  nats: NatsServer;
  certs: TestCerts;
  /** The test's own connection: plays ingress (live requests, queue publishes) and inspects JetStream. */
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  auth: AuthResponder;
  stop(): Promise<void>;
}

/** A private nats-server with JetStream, the queue stream (as ingress creates it), certs and auth. */
export async function startStack(stream: Partial<StreamConfig> = {}): Promise<Stack> {
  const [nats, certs] = await Promise.all([startNatsServer(), makeCerts()]);
  const nc = await connect({ ...nats.connectOptions(), ...RECONNECT });
  const jsm = await nc.jetstreamManager();
  // proto spells the config in JetStream's wire strings; nats.js types the same strings as enums.
  const layout = new QueueLayout();
  for (let p = 0; p < layout.partitions; p++) {
    await jsm.streams.add({
      ...(queueStreamConfig({}, layout, p) as unknown as Partial<StreamConfig>),
      ...stream,
    });
  }
  // The floor bucket, as ingress makes it with the streams (ensureQueueStream).
  await ensureQueueFloorBucket(nc.jetstream());
  await ensureDevicePositionBucket(nc.jetstream());
  const auth = new AuthResponder(nc);
  return {
    nats,
    certs,
    nc,
    js: nc.jetstream(),
    jsm,
    auth,
    async stop() {
      await nc.close();
      await nats.stop();
    },
  };
}

export interface RunningEdge {
  edge: Edge;
  port: number;
  /** The ops listener's port (/metrics, /readyz with its checks). */
  opsPort: number;
  nc: NatsConnection;
  metrics(): Promise<string>;
  close(): Promise<void>;
}

/** Starts an edge on its own NATS connection, configured through loadConfig like main.ts does. */
export async function startEdge(
  stack: Stack,
  env: Record<string, string> = {},
  deps: Partial<EdgeDeps> = {},
): Promise<RunningEdge> {
  const config = loadConfig({
    ...stack.nats.env('socket-edge'),
    TLS_CERT_FILE: stack.certs.certFile,
    TLS_KEY_FILE: stack.certs.keyFile,
    HOST: '127.0.0.1',
    PORT: '0',
    OPS_PORT: '0',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const nc = await connect({ ...stack.nats.connectOptions('socket-edge'), ...RECONNECT });
  const edge = createEdge(config, { nc, logger: createLogger('socket-edge', 'silent'), ...deps });
  const serving = await serve(edge, config);
  let closed = false;
  return {
    edge,
    port: serving.port,
    opsPort: serving.opsPort,
    nc,
    metrics: async () => {
      // /metrics is served on the plain-HTTP ops listener only.
      const res = await fetch(`http://127.0.0.1:${serving.opsPort}/metrics`);
      return res.text();
    },
    async close() {
      if (closed) return;
      closed = true;
      await serving.close();
      // As runService does: what the edge published last (the drainers' naks) goes out first.
      await nc.drain().catch(() => undefined);
    },
  };
}

/** What a test file runs against: its stack and one edge. */
export interface EdgeStack {
  stack: Stack;
  edge: RunningEdge;
}

/**
 * A test file's stack and edge (with `env`), started before its tests and handed to `ready`,
 * stopped after them (the stack also when the edge did not start).
 */
export function useEdgeStack(
  ready: (started: EdgeStack) => void,
  env: Record<string, string> = {},
): void {
  let stack: Stack | undefined;
  let edge: RunningEdge | undefined;
  beforeAll(async () => {
    stack = await startStack();
    edge = await startEdge(stack, env);
    ready({ stack, edge });
  });
  afterAll(async () => {
    await edge?.close();
    await stack?.stop();
  });
}

/**
 * socket-edge as its own process on the stack, as main.ts runs it, so kill -9 gives it no chance
 * to clean up; on `port` to restart one where it was.
 */
export async function startEdgeProcess(
  stack: Stack,
  port?: number,
  env: Record<string, string> = {},
): Promise<ServiceProcess> {
  return startServiceProcess(
    'socket-edge',
    port ?? (await freePort()),
    {
      ...stack.nats.env('socket-edge'),
      TLS_CERT_FILE: stack.certs.certFile,
      TLS_KEY_FILE: stack.certs.keyFile,
      ...env,
    },
    stack.certs.ca,
  );
}

/** GET over HTTPS trusting the test CA. */
export async function fetchText(
  stack: Stack,
  port: number,
  path: string,
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const https = await import('node:https');
  return new Promise((resolve, reject) => {
    const req = https.get({ host: '127.0.0.1', port, path, ca: stack.certs.ca }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
  });
}

/** Reads one sample from Prometheus text, e.g. metric(text, 'herald_open_sockets{framing="plain"}'). */
export function metric(textBody: string, series: string): number {
  const line = textBody.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? Number.NaN : Number(line.slice(series.length + 1));
}

export interface ConnectOptions {
  apiKey?: string;
  recipient?: string;
  client?: string;
  /** Offer herald.v1 (envelopes, acks); plain framing otherwise. */
  v1?: boolean;
  origin?: string;
  /** herald.v1: ack every event frame as it arrives. Default true. */
  autoAck?: boolean;
  autoPong?: boolean;
  /** Raw query string instead of the one built from apiKey/recipient/client. */
  query?: string;
  path?: string;
  /** Connect with `batch=1` (herald.v1 `events` frames, answered by one list ack when auto-acking). */
  batch?: boolean;
}

export interface TestClient {
  ws: WebSocket;
  /** Every text frame received, in order. */
  frames: string[];
  /** Parsed herald.v1 events, in order: each `event` frame, and each event of an `events` frame. */
  events: Array<{ type: string; id: string; ts: number; payload: unknown }>;
  /** The ids of each event frame, in order: one for an `event` frame, all of an `events` frame's. */
  frameIds: string[][];
  /** herald.v1: acks a list of ids in one frame (the answer to an `events` frame). */
  ackList(ids: string[]): void;
  opened: Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
  ack(id: string): void;
  /** herald.v1: acks every event received so far and, from now on, each one as it arrives. */
  ackAllFromNowOn(): void;
}

export function connectUrl(port: number, opts: ConnectOptions = {}): string {
  const query =
    opts.query ??
    new URLSearchParams({
      api_key: opts.apiKey ?? keys.mobileA,
      recipient: opts.recipient ?? randomUUID(),
      client: opts.client ?? 'mobile',
      ...(opts.batch ? { batch: '1' } : {}),
    }).toString();
  return `wss://127.0.0.1:${port}${opts.path ?? '/ws/connect'}?${query}`;
}

export function openClient(stack: Stack, port: number, opts: ConnectOptions = {}): TestClient {
  const ws = new WebSocket(connectUrl(port, opts), opts.v1 ? ['herald.v1'] : [], {
    ca: stack.certs.ca,
    ...(opts.origin ? { origin: opts.origin } : {}),
    autoPong: opts.autoPong ?? true,
  });
  const frames: string[] = [];
  const events: TestClient['events'] = [];
  const frameIds: string[][] = [];
  const ack = (id: string) => ws.send(JSON.stringify({ type: 'ack', id }));
  const ackList = (ids: string[]) => ws.send(JSON.stringify({ type: 'ack', ids }));
  let autoAck = opts.autoAck ?? true;
  ws.on('message', (data) => {
    const frame = data.toString();
    frames.push(frame);
    if (!opts.v1) return;
    const parsed = JSON.parse(frame) as TestClient['events'][number] & {
      events?: Array<{ id: string; ts: number; payload: unknown }>;
    };
    if (parsed.type === 'events' && parsed.events) {
      const batch = parsed.events.map((e) => ({ type: 'event', ...e }));
      events.push(...batch);
      frameIds.push(batch.map((e) => e.id));
      if (autoAck) ackList(batch.map((e) => e.id));
      return;
    }
    if (parsed.type !== 'event') return;
    events.push(parsed);
    frameIds.push([parsed.id]);
    if (autoAck) ack(parsed.id);
  });
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() }));
  });
  // Tests that expect a rejection await `closed`; an unobserved `opened` rejection must not fail them.
  opened.catch(() => undefined);
  const ackAllFromNowOn = () => {
    autoAck = true;
    for (const e of events) ack(e.id);
  };
  return { ws, frames, events, frameIds, opened, closed, ack, ackList, ackAllFromNowOn };
}

/** A plain upgrade that the edge refuses: the HTTP status and JSON body it answered with. */
export function expectRefusal(
  stack: Stack,
  port: number,
  opts: ConnectOptions = {},
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(connectUrl(port, opts), [], {
      ca: stack.certs.ca,
      ...(opts.origin ? { origin: opts.origin } : {}),
    });
    ws.on('open', () => reject(new Error('the upgrade was accepted')));
    ws.on('error', reject);
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) }));
    });
  });
}

/** Sends a live event exactly as ingress does: a request whose data is the payload text. */
export async function sendLive(
  nc: NatsConnection,
  account: string,
  recipient: string,
  payload: string,
  id: string = randomUUID(),
  timeout = 2000,
): Promise<LiveReply> {
  const h = headers();
  h.set(EventHeaders.id, id);
  h.set(EventHeaders.ts, String(Date.now()));
  const reply = await nc.request(subjects.live(account, recipient), text.encode(payload), {
    headers: h,
    timeout,
  });
  return LiveReply.parse(json.decode(reply.data));
}

/** Queues an event exactly as ingress does: a JetStream publish, then the core QueuedNotice. */
export async function queueEvent(
  stack: Stack,
  account: string,
  recipient: string,
  payload: string,
  id: string = randomUUID(),
): Promise<number> {
  const h = headers();
  h.set(EventHeaders.id, id);
  h.set(EventHeaders.ts, String(Date.now()));
  const ack = await stack.js.publish(subjects.queue(account, recipient), text.encode(payload), {
    headers: h,
  });
  stack.nc.publish(subjects.queued(account, recipient), json.encode({ v: 1, id }));
  return ack.seq;
}

/** Queues `count` events for the recipient (payloads `{"n":from}`, …), as ingress does. */
export async function queueMany(
  stack: Stack,
  account: string,
  recipient: string,
  count: number,
  from = 0,
): Promise<{ ids: string[]; seqs: number[] }> {
  const ids: string[] = [];
  const seqs: number[] = [];
  for (let n = from; n < from + count; n++) {
    const id = randomUUID();
    ids.push(id);
    seqs.push(await queueEvent(stack, account, recipient, `{"n":${n}}`, id));
  }
  return { ids, seqs };
}

export async function consumerInfo(
  stack: Stack,
  account: string,
  recipient: string,
): Promise<ConsumerInfo | undefined> {
  try {
    return await stack.jsm.consumers.info(
      queueStreamOf(account, recipient),
      queueConsumerName(account, recipient),
    );
  } catch {
    return undefined;
  }
}

/** Polls until `check` returns true; throws with `what` after timeoutMs. */
export async function waitUntil(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

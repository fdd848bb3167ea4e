import { randomBytes, randomUUID } from 'node:crypto';
import type { LiveReply } from '@herald/proto';
import {
  PUSHER_APP_SUBJECT,
  type PusherApp,
  PusherAppLookup,
  type PusherAppReply,
  type VerifiedKey,
} from '@herald/proto';
import { JSONCodec, type NatsConnection } from 'nats';
import PusherServer from 'pusher';
import * as PusherJs from 'pusher-js';
import { afterAll, beforeAll } from 'vitest';
import WebSocket from 'ws';
import {
  ACCOUNT_A,
  type RunningEdge,
  type Stack,
  sendLive,
  sleep,
  startEdge,
  startStack,
  verified,
  waitUntil,
} from './fixture.js';

const json = JSONCodec();

/** pusher-js's class: a CommonJS module whose types say `export default`. */
/** What the tests use of a pusher-js client (its package's types name a file it does not ship). */
export interface Pusher {
  connection: {
    state: string;
    socket_id: string;
    bind(event: string, callback: (data: unknown) => void): void;
  };
  subscribe(channel: string): PusherChannel;
  signin(): void;
  user: { bind(event: string, callback: (data: unknown) => void): void };
  disconnect(): void;
}
export interface PusherChannel {
  bind(event: string, callback: (data: unknown) => void): void;
}
const Pusher = ((PusherJs as unknown as { default?: unknown }).default ?? PusherJs) as new (
  key: string,
  options: object,
) => Pusher;

/** A Pusher app the in-test responder knows, with the server library signing for it. */
export interface TestApp {
  app: PusherApp;
  key: VerifiedKey;
  /** The stock `pusher` server library of this app: authorizeChannel, authenticateUser. */
  server: PusherServer;
}

/**
 * Auth's `rt.auth.pusher` played on the real nats-server, as AuthResponder plays `rt.auth.verify`:
 * answers for the apps made here, refuses others `invalid_api_key`, and a bound key can be
 * refused (`key_revoked`, …) the way auth's lookup refuses it.
 */
export class PusherApps {
  readonly #known = new Map<string, PusherAppReply>();
  #next = 0;

  constructor(nc: NatsConnection) {
    nc.subscribe(PUSHER_APP_SUBJECT, {
      callback: (err, msg) => {
        if (err) return;
        const req = PusherAppLookup.parse(json.decode(msg.data));
        const found = 'key' in req ? this.#known.get(req.key) : undefined;
        msg.respond(
          json.encode(
            found ?? {
              v: 1,
              ok: false,
              error: { code: 'invalid_api_key', message: 'no Pusher app has this key' },
            },
          ),
        );
      },
    });
  }

  /** A new app of account A (a mobile key unless `key` says otherwise). */
  make(over: Partial<PusherApp> = {}, key: Partial<VerifiedKey> = {}): TestApp {
    this.#next++;
    const app: PusherApp = {
      app_id: String(1_000_000 + this.#next),
      key: randomBytes(10).toString('hex'),
      secret: randomBytes(20).toString('hex'),
      account_id: ACCOUNT_A,
      key_id: `key-pusher-${this.#next}`,
      user_ids: 'any',
      user_channel: 'private-App.Models.User.{id}',
      ...over,
    };
    const bound = verified(app.key_id, app.account_id, 'mobile', null, null, key);
    this.#known.set(app.key, { v: 1, ok: true, app, key: bound });
    const server = new PusherServer({
      appId: app.app_id,
      key: app.key,
      secret: app.secret,
      cluster: 'mt1',
    });
    return { app, key: bound, server };
  }

  /** Deletes the app: its lookups answer `invalid_api_key` from now on. */
  remove(app: TestApp): void {
    this.#known.delete(app.app.key);
  }

  refuse(app: TestApp, code: 'key_revoked' | 'plan_inactive'): void {
    this.#known.set(app.app.key, { v: 1, ok: false, error: { code, message: `refused: ${code}` } });
  }
}

/**
 * The stock pusher-js (8.6.0, its Node build) against the edge. Its Node transport is
 * faye-websocket, whose client takes the CA to trust (and headers) as options but is built by
 * pusher-js's runtime with the URL alone: the runtime's socket factory is given the test CA (and
 * an Origin), so TLS is verified against it (no NODE_TLS_REJECT_UNAUTHORIZED, no other change to
 * pusher-js's protocol code).
 */
export function pusherClient(
  stack: Stack,
  port: number,
  test: TestApp,
  opts: { origin?: string } = {},
): Pusher {
  const runtime = (Pusher as unknown as { Runtime: PusherRuntime }).Runtime;
  runtime.createWebSocket = (url: string) => {
    const Client = runtime.getWebSocketAPI();
    return new Client(url, [], {
      ca: stack.certs.ca,
      ...(opts.origin ? { headers: { Origin: opts.origin } } : {}),
    });
  };
  return new Pusher(test.app.key, {
    cluster: 'mt1',
    wsHost: '127.0.0.1',
    wssPort: port,
    forceTLS: true,
    enabledTransports: ['ws'],
    disableStats: true,
    channelAuthorization: {
      endpoint: '/unused',
      transport: 'ajax',
      customHandler: ({ socketId, channelName }: ChannelParams, callback: AuthCallback) =>
        callback(null, test.server.authorizeChannel(socketId, channelName)),
    },
    userAuthentication: {
      endpoint: '/unused',
      transport: 'ajax',
      customHandler: ({ socketId }: { socketId: string }, callback: AuthCallback) =>
        callback(null, test.server.authenticateUser(socketId, currentUser.get(test) ?? { id: '' })),
    },
  });
}

interface ChannelParams {
  socketId: string;
  channelName: string;
}
// biome-ignore lint/suspicious/noExplicitAny: pusher-js's callbacks take its own auth data shapes.
type AuthCallback = (error: Error | null, data: any) => void;

interface PusherRuntime {
  getWebSocketAPI(): new (url: string, protocols: string[], options: object) => unknown;
  createWebSocket(url: string): unknown;
}

/** Who pusherClient's sign-in authenticates, per app (set before `pusher.signin()`). */
export const currentUser = new Map<TestApp, { id: string; device?: string }>();

export async function connected(pusher: Pusher): Promise<string> {
  await waitUntil('pusher-js connected', () => pusher.connection.state === 'connected', 20_000);
  return pusher.connection.socket_id;
}

/** A raw client speaking the Pusher protocol: every frame it got, parsed; it answers pings only if told. */
export interface RawPusher {
  ws: WebSocket;
  frames: Array<{ event: string; channel?: string; data?: unknown }>;
  closed: Promise<{ code: number; reason: string }>;
  socketId(): Promise<string>;
  send(event: string, data: unknown): void;
  /** Answers every pusher:ping from now on (and the one waiting, if any). */
  answerPings(): void;
}

export function rawPusher(
  stack: Stack,
  port: number,
  appKey: string,
  opts: { query?: string; answerPings?: boolean; origin?: string } = {},
): RawPusher {
  const query = opts.query ?? 'protocol=7&client=js&version=8.6.0';
  const ws = new WebSocket(`wss://127.0.0.1:${port}/app/${appKey}?${query}`, [], {
    ca: stack.certs.ca,
    ...(opts.origin ? { origin: opts.origin } : {}),
  });
  const frames: RawPusher['frames'] = [];
  let answer = opts.answerPings ?? true;
  let unanswered = 0;
  const send = (event: string, data: unknown) => ws.send(JSON.stringify({ event, data }));
  ws.on('message', (raw) => {
    const frame = JSON.parse(raw.toString()) as RawPusher['frames'][number];
    frames.push(frame);
    if (frame.event === 'pusher:ping') {
      if (answer) send('pusher:pong', {});
      else unanswered++;
    }
  });
  ws.on('error', () => undefined);
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() }));
  });
  return {
    ws,
    frames,
    closed,
    send,
    async socketId() {
      await waitUntil('connection_established', () =>
        frames.some((f) => f.event === 'pusher:connection_established'),
      );
      const established = frames.find((f) => f.event === 'pusher:connection_established');
      return (JSON.parse(established?.data as string) as { socket_id: string }).socket_id;
    },
    answerPings() {
      answer = true;
      for (; unanswered > 0; unanswered--) send('pusher:pong', {});
    },
  };
}

/**
 * A live event to the recipient, sent once its session holds the member socket (until then the
 * request finds no responder at once and is sent again); resolves with the pending reply (in an
 * object: an async function would wait for it).
 */
export async function liveOnceMember(
  stack: Stack,
  recipient: string,
  payload: string,
): Promise<{ reply: Promise<LiveReply> }> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const reply = sendLive(stack.nc, ACCOUNT_A, recipient, payload, randomUUID(), 30_000);
    const early = await Promise.race([
      reply.then(
        () => 'answered',
        () => 'refused',
      ),
      sleep(300).then(() => 'pending'),
    ]);
    if (early !== 'refused') return { reply };
    if (Date.now() > deadline) throw new Error('the member socket never joined its session');
    await sleep(20);
  }
}

/** What a Pusher door test file runs against, handed over once it started. */
export interface PusherDoor {
  stack: Stack;
  edge: RunningEdge;
  apps: PusherApps;
}

/**
 * A test file's Pusher door: a stack, Pusher apps on its NATS and an edge (with `env`) started
 * before the file's tests and handed to `ready`; after them, the pusher-js clients in `clients`
 * disconnected, the edge and the stack stopped.
 */
export function usePusherDoor(
  ready: (door: PusherDoor) => void,
  opts: { env?: Record<string, string>; clients?: Pusher[] } = {},
): void {
  let door: PusherDoor | undefined;
  beforeAll(async () => {
    const stack = await startStack();
    const apps = new PusherApps(stack.nc);
    door = { stack, apps, edge: await startEdge(stack, opts.env) };
    ready(door);
  });
  afterAll(async () => {
    for (const c of opts.clients ?? []) c.disconnect();
    await door?.edge.close();
    await door?.stack.stop();
  });
}

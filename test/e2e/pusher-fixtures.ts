import https from 'node:https';
import type { PusherAppObject, Stack } from '@herald/testkit';
import PusherServer from 'pusher';
import * as PusherJs from 'pusher-js';

/**
 * The stock Pusher libraries as the Pusher door's tests use them: pusher-js's Node build (its
 * faye-websocket transport given the stack's CA, so TLS is verified) signed in and authorised by
 * the stock `pusher` server library, and that library pointed at the stack's ingress.
 */

export interface PusherChannel {
  bind(event: string, callback: (data: unknown) => void): void;
}
export interface PusherClient {
  connection: {
    state: string;
    socket_id: string;
    bind(event: string, callback: (data: unknown) => void): void;
  };
  user: { bind(event: string, callback: (data: unknown) => void): void };
  subscribe(channel: string): PusherChannel;
  signin(): void;
  disconnect(): void;
}
type Callback = (err: Error | null, data: unknown) => void;

const Pusher = ((PusherJs as unknown as { default?: unknown }).default ?? PusherJs) as new (
  key: string,
  options: object,
) => PusherClient;
const runtime = (Pusher as unknown as { Runtime: PusherRuntime }).Runtime;
interface PusherRuntime {
  getWebSocketAPI(): new (url: string, protocols: string[], options: object) => unknown;
  createWebSocket(url: string): unknown;
}

/** The app's server side: its signer (what an app's auth endpoints call) and its API client. */
export function pusherBackend(stack: Stack, app: PusherAppObject): PusherServer {
  return new PusherServer({
    appId: app.app_id,
    key: app.key,
    secret: app.secret,
    host: '127.0.0.1',
    port: String(stack.ports['ingress-api']),
    useTLS: true,
    agent: new https.Agent({ ca: stack.ca }),
  });
}

export interface ClientOptions {
  /** The user this client signs in as (`pusher.signin()` is the caller's). */
  userId?: string;
  /** `user_data.device`, for per-device catch-up. */
  device?: string;
  /** Replaces the channel authorisation the backend signs (a tampered one). */
  channelAuth?: (socketId: string, channel: string) => unknown;
}

/** A stock pusher-js client of `app` on the stack's edge, authorised by `backend`. */
export function pusherClient(
  stack: Stack,
  app: PusherAppObject,
  backend: PusherServer,
  o: ClientOptions = {},
): PusherClient {
  runtime.createWebSocket = (url) => new (runtime.getWebSocketAPI())(url, [], { ca: stack.ca });
  return new Pusher(app.key, {
    cluster: 'mt1',
    wsHost: '127.0.0.1',
    wssPort: Number(new URL(stack.wsUrl).port),
    forceTLS: true,
    enabledTransports: ['ws'],
    disableStats: true,
    userAuthentication: {
      endpoint: '/pusher/user-auth',
      transport: 'ajax',
      customHandler: ({ socketId }: { socketId: string }, callback: Callback) =>
        callback(
          null,
          backend.authenticateUser(socketId, {
            id: o.userId ?? 'nobody',
            ...(o.device ? { device: o.device } : {}),
          }),
        ),
    },
    channelAuthorization: {
      endpoint: '/pusher/auth',
      transport: 'ajax',
      customHandler: (
        { socketId, channelName }: { socketId: string; channelName: string },
        callback: Callback,
      ) =>
        callback(
          null,
          o.channelAuth
            ? o.channelAuth(socketId, channelName)
            : backend.authorizeChannel(socketId, channelName),
        ),
    },
  });
}

/** Resolves once the client is connected (its socket id known). */
export function connected(client: PusherClient): Promise<string> {
  return new Promise((resolve) => {
    if (client.connection.state === 'connected') return resolve(client.connection.socket_id);
    client.connection.bind('connected', () => resolve(client.connection.socket_id));
  });
}

/** Resolves once the channel's subscription succeeded, rejects with its error. */
export function subscribed(channel: PusherChannel): Promise<void> {
  return new Promise((resolve, reject) => {
    channel.bind('pusher:subscription_succeeded', () => resolve());
    channel.bind('pusher:subscription_error', (e) =>
      reject(Object.assign(new Error('subscription refused'), { detail: e })),
    );
  });
}

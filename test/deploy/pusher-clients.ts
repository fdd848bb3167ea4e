import https from 'node:https';
import type { PusherAppObject } from '@herald/testkit';
import PusherServer from 'pusher';
import * as PusherJs from 'pusher-js';

// The stock Pusher libraries pointed at a container stack's published ports (the compose stack's
// ingress and edge, or the cluster's load balancer), for test/deploy/pusher.deploy.ts and the
// cluster's fault test (test/cluster/pusher-load.ts): pusher-js (its Node build) on the edge's
// `/app/{key}`, signing in with the `pusher` library's authenticateUser, and the `pusher`
// library on ingress's signed HTTP API. Both trust the stack's CA.

export type PusherApp = Pick<PusherAppObject, 'app_id' | 'key' | 'secret'>;

/** What the tests use of a pusher-js client. */
export interface PusherJsClient {
  connection: {
    state: string;
    socket_id: string;
    bind(event: string, callback: (data: unknown) => void): void;
  };
  user: {
    bind(event: string, callback: (data: unknown) => void): void;
    signin_requested: boolean;
  };
  signin(): void;
  subscribe(channel: string): {
    bind(event: string, callback: (data: unknown) => void): void;
  };
  connect(): void;
  disconnect(): void;
}

interface PusherRuntime {
  getWebSocketAPI(): new (url: string, protocols: string[], options: object) => unknown;
  createWebSocket(url: string): unknown;
}

const PusherClient = ((PusherJs as unknown as { default?: unknown }).default ?? PusherJs) as new (
  key: string,
  options: object,
) => PusherJsClient;
const runtime = (PusherClient as unknown as { Runtime: PusherRuntime }).Runtime;

/** The `pusher` server library on ingress at `baseUrl`, over a keep-alive agent trusting `ca`. */
export function pusherServer(baseUrl: string, ca: string, app: PusherApp): PusherServer {
  const url = new URL(baseUrl);
  return new PusherServer({
    appId: app.app_id,
    key: app.key,
    secret: app.secret,
    host: url.hostname,
    port: url.port,
    useTLS: true,
    timeout: 15_000,
    agent: new https.Agent({ ca, keepAlive: true, maxSockets: 8 }),
  });
}

/**
 * A stock pusher-js client on the edge at `wsUrl`, signing in as `userId` (once asked with
 * `signin()`, and again after every reconnect, as pusher-js does) with a signature the `pusher`
 * library makes. Its socket trusts `ca` (pusher-js's Node transport takes it in its options).
 */
export function pusherJs(
  wsUrl: string,
  ca: string,
  app: PusherApp,
  server: PusherServer,
  userId: string,
): PusherJsClient {
  runtime.createWebSocket = (url) => new (runtime.getWebSocketAPI())(url, [], { ca });
  const url = new URL(wsUrl);
  return new PusherClient(app.key, {
    cluster: 'mt1',
    wsHost: url.hostname,
    wssPort: Number(url.port),
    forceTLS: true,
    enabledTransports: ['ws'],
    disableStats: true,
    userAuthentication: {
      endpoint: '/unused',
      transport: 'ajax',
      customHandler: (
        { socketId }: { socketId: string },
        callback: (err: Error | null, data: unknown) => void,
      ) => callback(null, server.authenticateUser(socketId, { id: userId })),
    },
  });
}

/** The `herald_id` Herald splices into a JSON object's data, if there is one. */
export const heraldIdOf = (data: unknown): string | undefined => {
  const id = (data as { herald_id?: unknown } | null)?.herald_id;
  return typeof id === 'string' ? id : undefined;
};

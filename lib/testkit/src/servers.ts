/**
 * What a private server of the test kit is, whichever way it was started (a local binary, or a
 * container with HERALD_TEST_DOCKER=1): the starters and the container path share these.
 */
import type { NatsAuth, NatsCredentials, NatsUser } from './nats-auth.js';

export interface NatsServer {
  url: string;
  port: number;
  /** Each user's name and password (`admin` is the operator: every subject). */
  credentials: Record<NatsUser, NatsCredentials>;
  /** The auth callout's account seed: the auth service's NATS_CALLOUT_SEED. */
  calloutSeed: string;
  /** What nats.js's connect() takes to log in as `user` (default the operator). */
  connectOptions(user?: NatsUser): { servers: string; user: string; pass: string };
  /** NATS_URL, NATS_USER and NATS_PASSWORD of a Herald process logging in as `user`. */
  env(user: NatsUser): Record<string, string>;
  /** Stops the server (SIGTERM, then SIGKILL) and deletes its store unless keepStore. */
  stop(opts?: { keepStore?: boolean }): Promise<void>;
  /** Restarts on the same port and store (simulates a broker restart). */
  restart(): Promise<void>;
  /** The HTTP monitoring endpoint's base URL (started with `monitor`; the local binary only). */
  monitorUrl?: string;
  /** The server process's current pid (the local binary only; a restart changes it). */
  pid?: () => number | undefined;
}

/** A NatsServer from its address, its users and how to stop and restart it. */
export function natsServerHandle(
  url: string,
  port: number,
  auth: NatsAuth,
  life: Pick<NatsServer, 'stop' | 'restart'>,
): NatsServer {
  return {
    url,
    port,
    credentials: auth.credentials,
    calloutSeed: auth.calloutSeed,
    connectOptions: (user = 'admin') => ({ servers: url, ...auth.credentials[user] }),
    env: (user) => ({
      NATS_URL: url,
      NATS_USER: auth.credentials[user].user,
      NATS_PASSWORD: auth.credentials[user].pass,
    }),
    ...life,
  };
}

export interface PostgresServer {
  /** Connection string of the `herald` database. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

import { type CoreNatsServer, startCoreNatsServer } from '@herald/testkit';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll } from 'vitest';

export interface CorePair {
  /** The server's URL and the operator's credentials, for a test's own connection. */
  connectOptions(): { servers: string; user: string; pass: string };
  /** The connection under test (the one a publisher writes to). */
  readonly nc: NatsConnection;
  /** A second connection that subscribes and answers. */
  readonly peer: NatsConnection;
}

/**
 * A core nats-server (no JetStream) of this test file's own and two connections to it, started
 * before the file's tests and stopped after them.
 */
export function useCorePair(): CorePair {
  let server: CoreNatsServer | undefined;
  let nc: NatsConnection | undefined;
  let peer: NatsConnection | undefined;
  beforeAll(async () => {
    server = await startCoreNatsServer();
    const opts = server.connectOptions();
    [nc, peer] = await Promise.all([connect(opts), connect(opts)]);
  });
  afterAll(async () => {
    await Promise.all([nc?.close(), peer?.close()]);
    await server?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useCorePair: used before its beforeAll ran');
    return value;
  };
  return {
    connectOptions() {
      return started(server).connectOptions();
    },
    get nc() {
      return started(nc);
    },
    get peer() {
      return started(peer);
    },
  };
}

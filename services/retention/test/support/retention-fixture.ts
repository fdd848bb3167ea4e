import { createLogger } from '@herald/kit';
import { type NatsServer, startNatsServer } from '@herald/testkit';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { loadRunOnceConfig } from '../../src/config.js';
import { createRetention, type Retention, type RetentionDeps } from '../../src/index.js';
import { addQueueStream, deleteQueueStreams } from './queue-fixture.js';

export interface RetentionFixture {
  server: NatsServer;
  nc: NatsConnection;
  jsm: JetStreamManager;
  /** A retention instance over the test server (fast API rate, silent logs). */
  retention(env?: Record<string, string>, deps?: Partial<RetentionDeps>): Retention;
  /** Drops the queue stream (and with it every consumer) and creates it afresh. */
  resetQueue(): Promise<void>;
  close(): Promise<void>;
}

/** A private nats-server with the queue stream, and a factory for retention instances on it. */
export async function startRetentionFixture(): Promise<RetentionFixture> {
  const server = await startNatsServer();
  const nc = await connect(server.connectOptions());
  const jsm = await nc.jetstreamManager();
  await addQueueStream(jsm);
  const made: Retention[] = [];
  return {
    server,
    nc,
    jsm,
    retention(env = {}, deps = {}) {
      const config = loadRunOnceConfig({
        ...server.env('retention'),
        RETENTION_API_RATE: '20000',
        LOG_LEVEL: 'silent',
        ...env,
      });
      const r = createRetention(config, {
        nc,
        logger: createLogger('retention', process.env.RETENTION_TEST_LOG ?? 'silent'),
        ...deps,
      });
      made.push(r);
      return r;
    },
    async resetQueue() {
      await deleteQueueStreams(jsm);
      await addQueueStream(jsm);
    },
    async close() {
      await Promise.all(made.map((r) => r.close()));
      await nc.close();
      await server.stop();
    },
  };
}

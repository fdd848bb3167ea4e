import { GenericContainer, type StartedTestContainer, Wait } from 'testcontainers';
import { pinnedNatsVersion } from './nats-binary.js';
import { freePort } from './ports.js';
import type { NatsServer, PostgresServer } from './servers.js';

/**
 * Opt-in (HERALD_TEST_DOCKER=1): the same private servers as containers, for machines with a
 * Docker engine and no local nats-server or PostgreSQL. The images pin the versions the local
 * path runs (the pinned nats-server and PostgreSQL 15), so both paths test the same thing.
 * This machine kind has no Docker engine, so the default is the local binaries.
 */
export const useContainers = (): boolean => process.env.HERALD_TEST_DOCKER === '1';

export async function startNatsContainer(): Promise<NatsServer> {
  // A fixed host port, so a restart keeps the URL clients reconnect to (as the local path does).
  const port = await freePort();
  const container: StartedTestContainer = await new GenericContainer(
    `nats:${pinnedNatsVersion()}-alpine`,
  )
    .withCommand(['-js', '-sd', '/data'])
    .withExposedPorts({ container: 4222, host: port })
    .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
    .start();
  return {
    url: `nats://${container.getHost()}:${port}`,
    port,
    async stop() {
      await container.stop();
    },
    async restart() {
      await container.restart();
    },
  };
}

export async function startPostgresContainer(): Promise<PostgresServer> {
  const container = await new GenericContainer('postgres:15-alpine')
    .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust', POSTGRES_DB: 'herald' })
    .withTmpFs({ '/var/lib/postgresql/data': 'rw' })
    .withExposedPorts(5432)
    .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .start();
  const port = container.getMappedPort(5432);
  return {
    url: `postgres://postgres@${container.getHost()}:${port}/herald`,
    port,
    async stop() {
      await container.stop();
    },
  };
}

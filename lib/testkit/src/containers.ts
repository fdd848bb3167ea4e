import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GenericContainer, type StartedTestContainer, Wait } from 'testcontainers';
import type { NatsAuth } from './nats-auth.js';
import { pinnedNatsVersion } from './nats-binary.js';
import { freePort } from './ports.js';
import { type NatsServer, natsServerHandle, type PostgresServer } from './servers.js';
import { REPO_ROOT } from './service-process.js';

/**
 * Opt-in (HERALD_TEST_DOCKER=1): the same private servers as containers, for machines with a
 * Docker engine and no local nats-server or PostgreSQL. The images pin the versions the local
 * path runs (the pinned nats-server and PostgreSQL 15), so both paths test the same thing.
 * This machine kind has no Docker engine, so the default is the local binaries.
 */
export const useContainers = (): boolean => process.env.HERALD_TEST_DOCKER === '1';

export async function startNatsContainer(auth: NatsAuth): Promise<NatsServer> {
  // A fixed host port, so a restart keeps the URL clients reconnect to (as the local path does).
  const port = await freePort();
  const container: StartedTestContainer = await new GenericContainer(
    `nats:${pinnedNatsVersion()}-alpine`,
  )
    .withCommand(['-c', '/etc/nats/nats.conf'])
    .withEnvironment(auth.serverEnv)
    .withCopyContentToContainer([
      {
        content: readFileSync(join(REPO_ROOT, 'deploy', 'nats', 'users.conf'), 'utf8'),
        target: '/etc/nats/users.conf',
      },
      {
        content: 'jetstream { store_dir: /data }\ninclude users.conf\n',
        target: '/etc/nats/nats.conf',
      },
    ])
    .withExposedPorts({ container: 4222, host: port })
    .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
    .start();
  return natsServerHandle(`nats://${container.getHost()}:${port}`, port, auth, {
    async stop() {
      await container.stop();
    },
    async restart() {
      await container.restart();
    },
  });
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

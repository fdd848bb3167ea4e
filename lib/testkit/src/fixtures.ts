import { test as base } from 'vitest';
import { type NatsServer, startNatsServer } from './nats-server.js';
import { type PostgresServer, startPostgres } from './postgres.js';

export interface HeraldFixtures {
  /** A private nats-server with JetStream on a free port, shared by the tests of one file. */
  nats: NatsServer;
  /** A private Postgres cluster on a free port, shared by the tests of one file. */
  postgres: PostgresServer;
}

/**
 * vitest's `test` with Herald's real servers as fixtures: a test names what it needs
 * (`test('…', async ({ nats }) => …)`) and gets a started server, stopped after the file's last
 * test. Lazy: a file that asks for neither starts neither.
 */
export const test = base.extend<HeraldFixtures>({
  nats: [
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads the fixture's dependencies from this pattern
    async ({}, use) => {
      const server = await startNatsServer();
      try {
        await use(server);
      } finally {
        await server.stop();
      }
    },
    { scope: 'file' },
  ],
  postgres: [
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads the fixture's dependencies from this pattern
    async ({}, use) => {
      const server = await startPostgres();
      try {
        await use(server);
      } finally {
        await server.stop();
      }
    },
    { scope: 'file' },
  ],
});

import {
  closeServer,
  connectNats,
  createLogger,
  createServer,
  listen,
  startOpsServer,
} from '@herald/kit';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config.js';
import { type AuthService, createAuthService } from '../src/index.js';
import { TEST_CATALOGUE } from './catalogue.js';
import { natsOf, type Servers, startServers } from './servers.js';

// Found by an audit: with nats-server stopped, /readyz kept answering 200 with nats:true (a
// reconnecting connection is neither closed nor draining) while every verification failed.

const logger = createLogger('auth-test', 'silent');

let servers: Servers;
let nc: NatsConnection;
let service: AuthService;
let server: ReturnType<typeof createServer>;
let port: number;
let opsPort: number;
let closeOps: () => Promise<void>;

beforeAll(async () => {
  servers = await startServers({ nats: true });
  const config = loadConfig({
    DATABASE_URL: servers.pg.url,
    ...natsOf(servers).env('auth'),
    TLS_DISABLED: 'true',
    OPS_PORT: '0',
  });
  // As main.ts connects: reconnecting forever, so the connection stays open through the outage.
  nc = await connectNats(config, 'auth', logger);
  service = createAuthService(config, { nc, db: servers.db, logger, catalogue: TEST_CATALOGUE });
  server = createServer(config, service.handler);
  port = await listen(server, 0, '127.0.0.1');
  const ops = await startOpsServer(config, service.opsHandler);
  opsPort = ops.port;
  closeOps = () => ops.close();
});

afterAll(async () => {
  if (server) await closeServer(server);
  await closeOps?.();
  await service?.close();
  await nc?.close();
  await servers?.stop();
});

async function readiness(base: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}/readyz`);
  return { status: res.status, body: await res.json() };
}
const ops = () => readiness(`http://127.0.0.1:${opsPort}`);
const open = () => readiness(`http://127.0.0.1:${port}`);
const POLL = { timeout: 30_000, interval: 200 };

describe('/readyz', () => {
  it('says not ready, naming nats, while nats-server is down, and ready once it is back', async () => {
    expect(await ops()).toEqual({
      status: 200,
      body: { status: 'ready', checks: { nats: true, postgres: true } },
    });

    await servers.nats?.stop({ keepStore: true });
    await vi.waitUntil(async () => (await ops()).status === 503, POLL);
    expect(await ops()).toEqual({
      status: 503,
      body: { status: 'not_ready', checks: { nats: false, postgres: true } },
    });
    expect(await open()).toEqual({ status: 503, body: { status: 'not_ready' } });

    await servers.nats?.restart();
    await vi.waitUntil(async () => (await ops()).status === 200, POLL);
    expect(await ops()).toEqual({
      status: 200,
      body: { status: 'ready', checks: { nats: true, postgres: true } },
    });
    expect(await open()).toEqual({ status: 200, body: { status: 'ready' } });
  }, 90_000);
});

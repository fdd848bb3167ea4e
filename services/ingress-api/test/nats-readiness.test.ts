import { connectNats, createLogger, type Serving, serve } from '@herald/kit';
import { type NatsServer, startNatsServer } from '@herald/testkit';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createIngress } from '../src/index.js';
import { testConfig } from './support/fixture.js';
import { request } from './support/http.js';

// Found by an audit: with nats-server stopped, /readyz said nats:true (a reconnecting connection
// is neither closed nor draining) and went 503 only through queue_stream.

const logger = createLogger('ingress-api', 'silent');

let nats: NatsServer;
let nc: NatsConnection;
let serving: Serving;
let baseUrl: string;

beforeAll(async () => {
  nats = await startNatsServer();
  const config = testConfig(nats);
  // As main.ts connects (the shared fixture's client gives up after ten reconnect attempts).
  nc = await connectNats(config, 'ingress-api', logger);
  serving = await serve(createIngress(config, { nc, logger }), config, 0);
  baseUrl = `http://127.0.0.1:${serving.port}`;
});

afterAll(async () => {
  await serving?.close();
  await nc?.close();
  await nats?.stop();
});

async function readiness(base: string): Promise<{ status: number; body: unknown }> {
  const res = await request(base, { method: 'GET', path: '/readyz' });
  return { status: res.status, body: res.json };
}
const ops = () => readiness(`http://127.0.0.1:${serving.opsPort}`);
const POLL = { timeout: 30_000, interval: 200 };

describe('/readyz', () => {
  it('says nats:false while nats-server is down, and ready once it is back', async () => {
    expect(await ops()).toEqual({
      status: 200,
      body: { status: 'ready', checks: { nats: true, queue_stream: true } },
    });

    await nats.stop({ keepStore: true });
    await vi.waitUntil(async () => (await ops()).status === 503, POLL);
    expect(await ops()).toEqual({
      status: 503,
      body: { status: 'not_ready', checks: { nats: false, queue_stream: false } },
    });
    expect(await readiness(baseUrl)).toEqual({ status: 503, body: { status: 'not_ready' } });

    await nats.restart();
    // JetStream reloads the queue streams from the kept store after the connection is back.
    await vi.waitUntil(async () => (await ops()).status === 200, POLL);
    expect(await ops()).toEqual({
      status: 200,
      body: { status: 'ready', checks: { nats: true, queue_stream: true } },
    });
    expect(await readiness(baseUrl)).toEqual({ status: 200, body: { status: 'ready' } });
  }, 90_000);
});

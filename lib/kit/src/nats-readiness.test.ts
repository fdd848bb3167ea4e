import { type NatsServer, startNatsServer } from '@herald/testkit';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { natsReady } from './nats.js';
import { natsAnswers } from './nats-readiness.js';

let nats: NatsServer;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await startNatsServer();
  // As connectNats: reconnecting forever, so the connection is neither closed nor draining while
  // the server is down.
  nc = await connect({
    ...nats.connectOptions(),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
  });
});

afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

const POLL = { timeout: 20_000, interval: 100 };

describe('natsAnswers', () => {
  it('is false while the server is down, though the connection looks usable, and true once it is back', async () => {
    expect(await natsAnswers(nc)).toBe(true);

    await nats.stop({ keepStore: true });
    await vi.waitUntil(async () => !(await natsAnswers(nc, 500)), POLL);
    // What /readyz reported before: a reconnecting connection is neither closed nor draining.
    expect(natsReady(nc)).toBe(true);
    // Probes made while the server stays down keep failing within their timeout.
    const started = Date.now();
    expect(await natsAnswers(nc, 500)).toBe(false);
    expect(Date.now() - started).toBeLessThan(5_000);

    await nats.restart();
    await vi.waitUntil(() => natsAnswers(nc, 500), POLL);
  }, 60_000);

  it('is false for a closed connection, without waiting', async () => {
    const other = await connect(nats.connectOptions());
    await other.close();
    const started = Date.now();
    expect(await natsAnswers(other, 10_000)).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

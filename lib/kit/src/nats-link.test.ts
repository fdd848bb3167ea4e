import { type NatsServer, startNatsServer } from '@herald/testkit';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { watchNatsLink } from './nats-link.js';

let nats: NatsServer;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connect({
    ...nats.connectOptions(),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 100,
  });
});

afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

const POLL = { timeout: 20_000, interval: 20 };

describe('watchNatsLink', () => {
  it('is down only past the grace after the loss, and up again from the reconnect', async () => {
    const GRACE = 1000;
    let clock = 0;
    const link = watchNatsLink(nc, GRACE, () => clock);
    // A second link with no grace shows when the loss was seen.
    const eager = watchNatsLink(nc, 0, () => clock);
    expect(link.down).toBe(false);

    await nats.stop({ keepStore: true });
    await vi.waitUntil(() => eager.down, POLL);
    expect(link.down).toBe(false);
    clock += GRACE - 1;
    expect(link.down).toBe(false);
    clock += 1;
    expect(link.down).toBe(true);

    await nats.restart();
    await vi.waitUntil(() => !link.down, POLL);
    expect(eager.down).toBe(false);
  }, 30_000);

  it('is down once the connection is closed', async () => {
    const other = await connect(nats.connectOptions());
    const link = watchNatsLink(other, 60_000);
    expect(link.down).toBe(false);
    await other.close();
    expect(link.down).toBe(true);
  });
});

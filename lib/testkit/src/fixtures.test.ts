import { connect } from 'nats';
import { describe, expect } from 'vitest';
import { test } from './fixtures.js';

describe('vitest fixtures', () => {
  test('hands a test a running nats-server with JetStream', async ({ nats }) => {
    const nc = await connect(nats.connectOptions());
    try {
      const jsm = await nc.jetstreamManager();
      expect((await jsm.getAccountInfo()).limits).toBeDefined();
    } finally {
      await nc.close();
    }
  });

  test('shares that server with the file’s next test', async ({ nats }) => {
    const nc = await connect(nats.connectOptions());
    await nc.flush();
    expect(nc.getServer()).toContain(String(nats.port));
    await nc.close();
  });
});

import { randomUUID } from 'node:crypto';
import { createLogger } from '@herald/kit';
import { queueConsumerName, queueStreamOf } from '@herald/queue';
import { get, openSocket, post, type Stack, startStack } from '@herald/testkit';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRunOnceConfig } from '../src/config.js';
import { createRetention } from '../src/index.js';
import type { RunSummary } from '../src/run-summary.js';
import { storedIds } from './support/queue-fixture.js';

/**
 * Through the real services: ingress queues and refuses at the per-recipient cap, the real edge
 * delivers and acks (herald.v1), retention deletes what was acked and reaps the consumer, and the
 * edge re-creates it for the next event without redelivering anything.
 */
describe('retention with the whole stack', () => {
  let stack: Stack;
  let nc: NatsConnection;
  beforeAll(async () => {
    stack = await startStack({
      services: ['auth', 'ingress-api', 'socket-edge', 'retention'],
      env: {
        'ingress-api': { QUEUE_MAX_PER_RECIPIENT: '3' },
        // Its own schedule must not fire during the test (the test's runs are the ones under test).
        retention: { RETENTION_SCHEDULE: '0 0 1 1 *' },
      },
    });
    nc = await connect(stack.nats.connectOptions());
  });
  afterAll(async () => {
    await nc?.close();
    await stack?.stop();
  });

  it('purges what the edge delivered, reaps its consumer, and the next event is delivered once', async () => {
    const { id: account } = await stack.createAccount();
    const { key } = await stack.createKey({ account, kind: 'test', client: 'mobile' });
    const to = randomUUID();
    const send = (n: number) =>
      post(stack.baseUrl, stack.ca, {
        recipient: to,
        payload: { n },
        api_key: key,
        client: 'mobile',
      });

    const ids: string[] = [];
    for (let n = 0; n < 3; n++) {
      const res = await send(n);
      expect(res.status).toBe(202);
      ids.push(res.body.id);
    }
    const full = await send(3);
    expect(full.status).toBe(507);
    expect(full.body.error.code).toBe('queue_full');

    const sock = openSocket(stack.wsUrl, stack.ca, { apiKey: key, recipient: to, v1: true });
    await sock.opened;
    // Generous: this file shares the machine with every other stack the suite starts.
    await sock.waitForFrames(3, 20_000).catch(async (err: Error) => {
      const ended = await Promise.race([
        sock.ended,
        new Promise((r) => setTimeout(() => r('still open'), 10)),
      ]);
      throw new Error(`${err.message}; socket: ${JSON.stringify(ended)}`);
    });
    expect(sock.events().map((e) => e.id)).toEqual(ids);
    await sock.close();

    const retention = createRetention(
      loadRunOnceConfig({ ...stack.nats.env('retention'), LOG_LEVEL: 'silent' }),
      {
        nc,
        logger: createLogger('retention', 'silent'),
      },
    );
    // The edge acks in JetStream as the client's acks arrive, and lets go of its pull on close:
    // run until both have landed (each run is cheap; nothing here depends on timing).
    const runs: RunSummary[] = [];
    for (let i = 0; i < 50 && !runs.some((r) => r.consumers_reaped === 1); i++) {
      runs.push(await retention.runOnce());
      await new Promise((r) => setTimeout(r, 100));
    }
    await retention.close();
    expect(runs.reduce((n, r) => n + r.events_purged, 0)).toBe(3);
    expect(runs.reduce((n, r) => n + r.consumers_reaped, 0)).toBe(1);
    const jsm = await nc.jetstreamManager();
    expect(await storedIds(jsm, account, to)).toEqual([]);
    await expect(
      jsm.consumers.info(queueStreamOf(account, to), queueConsumerName(account, to)),
    ).rejects.toThrow(/consumer not found/);

    // Room again under the cap; the edge re-creates the consumer and delivers only the new event.
    const later = await send(4);
    expect(later.status).toBe(202);
    const again = openSocket(stack.wsUrl, stack.ca, { apiKey: key, recipient: to, v1: true });
    await again.waitForFrames(1, 20_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(again.events().map((e) => e.id)).toEqual([later.body.id]);
    await again.close();

    // The retention service itself runs in the stack, over TLS.
    const ready = await get(`https://127.0.0.1:${stack.ports.retention}`, stack.ca, '/readyz');
    expect(ready.status).toBe(200);
  }, 90_000);
});

import { createLogger } from '@herald/kit';
import { type CoreNatsServer, startCoreNatsServer } from '@herald/testkit';
import { connect, type NatsConnection, type Subscription } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIngress } from '../src/index.js';
import { testConfig } from './support/fixture.js';

// A real nats-server without JetStream, and a subscriber on the JetStream API that never answers:
// every request ingress makes at start times out, as on a cluster that has no leader yet.
let nats: CoreNatsServer;
let peer: NatsConnection;
let nc: NatsConnection;
let silent: Subscription;
const asked: string[] = [];

beforeAll(async () => {
  nats = await startCoreNatsServer();
  peer = await connect(nats.connectOptions());
  silent = peer.subscribe('$JS.API.>', { callback: (_err, msg) => asked.push(msg.subject) });
  await peer.flush();
  nc = await connect(nats.connectOptions());
});
afterAll(async () => {
  silent?.unsubscribe();
  await nc?.close();
  await peer?.close();
  await nats?.stop();
});

async function startWith(waitMs: string): Promise<{ error: Error; requests: string[] }> {
  asked.length = 0;
  const ingress = createIngress(testConfig(nats, { JETSTREAM_START_WAIT_MS: waitMs }), {
    nc,
    logger: createLogger('ingress-api', 'silent'),
  });
  const error = await ingress.start().then(
    () => new Error('started without JetStream'),
    (err: Error) => err,
  );
  await ingress.close();
  return { error, requests: [...asked] };
}

describe('ingress start while JetStream does not answer (JETSTREAM_START_WAIT_MS)', () => {
  it('tries once and fails naming the setting when it is 0', async () => {
    const { error, requests } = await startWith('0');
    expect(error.message).toMatch(/TIMEOUT.*JETSTREAM_START_WAIT_MS; attempts: 1\)/);
    expect(requests).toHaveLength(1);
  });

  it('asks again while the wait lasts, then fails naming the setting', async () => {
    // Each attempt waits out the JetStream request timeout (2 s); 3.5 s leaves room for a second.
    const { error, requests } = await startWith('3500');
    expect(error.message).toMatch(/JETSTREAM_START_WAIT_MS; attempts: [2-9]\)/);
    expect(requests.length).toBeGreaterThanOrEqual(2);
    expect(new Set(requests).size).toBe(1);
  });
});

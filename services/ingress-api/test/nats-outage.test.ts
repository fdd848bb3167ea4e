import { connectNats, createLogger, type Serving, serve } from '@herald/kit';
import { DispatchStatus } from '@herald/proto';
import { type NatsServer, startNatsServer } from '@herald/testkit';
import { connect, type NatsConnection, type Subscription } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIngress } from '../src/index.js';
import { KEYS, startAuthResponder } from './support/auth-responder.js';
import { newRecipient, notifyBody, testConfig } from './support/fixture.js';
import { type Reply, request } from './support/http.js';

// Found by an audit: with nats-server down, POST /notify answered 503 only after ~9 s, each step
// (key check, live push, queue publish) waiting out its own timeout in nats.js's reconnect buffer.
// Here the timeouts are long (20 s each), so a request that waits for them cannot answer within
// the client's bound below; the outage grace (NATS_OUTAGE_GRACE_MS) is short.

const GRACE_MS = 200;
/** The client's own bound: far below the 60 s the request's NATS steps would wait in all. */
const CLIENT_BOUND_MS = 5000;
/** How long after the reconnect the service may still refuse while its dependencies come back. */
const RECOVERY_BOUND_MS = 10_000;

let nats: NatsServer;
let nc: NatsConnection;
let peer: NatsConnection;
let authSub: Subscription;
let serving: Serving;
let baseUrl: string;
/** Resolves at the ingress connection's next `disconnect` / `reconnect` status. */
let nextStatus: (type: 'disconnect' | 'reconnect') => Promise<void>;

beforeAll(async () => {
  nats = await startNatsServer();
  const config = testConfig(nats, {
    AUTH_TIMEOUT_MS: '20000',
    LIVE_TIMEOUT_MS: '20000',
    PUBLISH_TIMEOUT_MS: '20000',
    // A cached key would skip the key check; the outage must be answered either way.
    KEY_CACHE_TTL_MS: '0',
    NATS_OUTAGE_GRACE_MS: String(GRACE_MS),
  });
  // As main.ts connects: reconnecting forever.
  const logger = createLogger('ingress-api', 'silent');
  nc = await connectNats(config, 'ingress-api', logger);
  peer = await connect({
    ...nats.connectOptions(),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 100,
  });
  authSub = startAuthResponder(peer);
  const waiters: { type: string; resolve: () => void }[] = [];
  void (async () => {
    for await (const s of nc.status()) {
      for (const w of waiters.splice(0))
        if (w.type === s.type) w.resolve();
        else waiters.push(w);
    }
  })();
  nextStatus = (type) => new Promise((resolve) => waiters.push({ type, resolve }));
  serving = await serve(createIngress(config, { nc, logger }), config, 0);
  baseUrl = `http://127.0.0.1:${serving.port}`;
});

afterAll(async () => {
  await serving?.close();
  await nc?.close();
  await peer?.close();
  await nats?.stop();
});

/** A request that fails the test if it takes longer than CLIENT_BOUND_MS. */
function bounded(path: string, body: unknown, headers?: Record<string, string>): Promise<Reply> {
  return Promise.race([
    request(baseUrl, { path, body, ...(headers ? { headers } : {}) }),
    new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new Error(`${path} did not answer within ${CLIENT_BOUND_MS} ms`)),
        CLIENT_BOUND_MS,
      ),
    ),
  ]);
}

const UNAVAILABLE = {
  code: 'unavailable',
  message: expect.stringContaining('cannot reach NATS'),
};

describe('while auth does not answer', () => {
  it('refuses with 503 unavailable and Retry-After: 1, and dispatches again once auth is back', async () => {
    authSub.unsubscribe();
    await peer.flush();
    try {
      const refused = await bounded('/notify', notifyBody(newRecipient()));
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.json).toEqual({
        status: DispatchStatus.failed,
        error: { code: 'unavailable', message: expect.stringContaining('retry shortly') },
      });
    } finally {
      authSub = startAuthResponder(peer);
      await peer.flush();
    }
    expect((await bounded('/notify', notifyBody(newRecipient()))).status).toBe(202);
  });
});

describe('while nats-server is down', () => {
  it('refuses at once with 503 and Retry-After, keeps validating, and works again once it is back', async () => {
    const stored = await bounded('/notify', notifyBody(newRecipient()));
    expect(stored.status).toBe(202);

    const lost = nextStatus('disconnect');
    await nats.stop({ keepStore: true });
    await lost;
    await new Promise((resolve) => setTimeout(resolve, GRACE_MS + 100));

    const single = await bounded('/notify', notifyBody(newRecipient()));
    expect(single.status).toBe(503);
    expect(single.headers['retry-after']).toBe('1');
    expect(single.json).toEqual({ status: DispatchStatus.failed, error: UNAVAILABLE });

    // The request's own mistakes are still named first: they are what its sender must fix.
    const bad = await bounded('/notify', { ...notifyBody(newRecipient()), recipient: 'nope' });
    expect(bad.status).toBe(400);
    expect(bad.json.error.field).toBe('recipient');

    const batch = await bounded('/notify/batch', {
      api_key: KEYS.mobile,
      client: 'mobile',
      events: [{ recipient: newRecipient(), payload: { n: 1 } }],
    });
    expect(batch.status).toBe(503);
    expect(batch.headers['retry-after']).toBe('1');
    expect(batch.json.error).toEqual(UNAVAILABLE);

    const status = await bounded('/events/status', { api_key: KEYS.mobile, ids: [stored.json.id] });
    expect(status.status).toBe(503);
    expect(status.json.error).toEqual(UNAVAILABLE);

    const back = nextStatus('reconnect');
    await nats.restart();
    await back;
    // Ingress's own connection is back, but its dependencies may not be yet: the auth responder
    // reconnects on its own schedule, and JetStream reloads the queue streams from the kept store.
    // Until they are, a request may still be refused, and only as unavailable, to retry.
    const refusals: Reply[] = [];
    let reply = await bounded('/notify', notifyBody(newRecipient()));
    for (
      const until = Date.now() + RECOVERY_BOUND_MS;
      reply.status !== 202 && Date.now() < until;
    ) {
      refusals.push(reply);
      await new Promise((resolve) => setTimeout(resolve, 100));
      reply = await bounded('/notify', notifyBody(newRecipient()));
    }
    for (const r of refusals) {
      expect(r.status).toBe(503);
      expect(r.headers['retry-after']).toBe('1');
    }
    expect(reply.status).toBe(202);
    expect(reply.json.status).toBe(DispatchStatus.queued);
  }, 60_000);
});

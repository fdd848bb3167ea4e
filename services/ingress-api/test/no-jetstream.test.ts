import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@herald/kit';
import { DispatchStatus } from '@herald/proto';
import { type CoreNatsServer, startCoreNatsServer } from '@herald/testkit';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIngress, type Ingress } from '../src/index.js';
import { answerFor, key, ROOMY_LIMITS, startAuthResponder } from './support/auth-responder.js';
import { edgeStandIn, newRecipient, notifyBody, testConfig } from './support/fixture.js';
import { request } from './support/http.js';

// A real nats-server started without -js: JetStream is unavailable, core NATS works.
let nats: CoreNatsServer;
let peer: NatsConnection;
let nc: NatsConnection;
let ingress: Ingress;
let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  nats = await startCoreNatsServer();
  peer = await connect(nats.connectOptions());
  startAuthResponder(peer);
  nc = await connect(nats.connectOptions());
  ingress = createIngress(testConfig(nats), {
    nc,
    logger: createLogger('ingress-api', 'silent'),
  });
  // Not served: start() would (rightly) refuse to run without the queue stream. The app alone still
  // shows what a dispatch answers when JetStream goes away under a running ingress.
  server = http.createServer(ingress.app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await ingress?.close();
  await nc?.close();
  await peer?.close();
  await nats?.stop();
});

describe('without JetStream', () => {
  it('answers an offline dispatch with 503 "Failed to send/save notification"', async () => {
    const res = await request(baseUrl, { body: notifyBody(newRecipient()) });
    expect(res.status).toBe(503);
    expect(res.json).toEqual({
      status: DispatchStatus.failed,
      error: {
        code: 'unavailable',
        message: expect.stringContaining('offline queue is unavailable'),
      },
    });
  });

  it('answers 503 for an Idempotency-Key dispatch, since at-most-once cannot be guaranteed', async () => {
    const res = await request(baseUrl, {
      body: notifyBody(newRecipient()),
      headers: { 'idempotency-key': 'k-1' },
    });
    expect(res.status).toBe(503);
    expect(res.json.status).toBe(DispatchStatus.failed);
  });

  it('still pushes to a connected recipient (live push needs no JetStream)', async () => {
    const recipient = newRecipient();
    const edge = edgeStandIn(peer, recipient);
    await peer.flush();
    const res = await request(baseUrl, { body: notifyBody(recipient) });
    edge.stop();
    expect(res.status).toBe(200);
    expect(edge.received).toHaveLength(1);
  });

  it('still limits the dispatch rate, on this instance alone, while the shared state is unreachable', async () => {
    const apiKey = 'hk_live_rate_without_jetstream';
    answerFor(
      apiKey,
      key('key-rate-no-js', { limits: { ...ROOMY_LIMITS, dispatch_rate: 0.5, dispatch_burst: 2 } }),
    );
    const recipient = newRecipient();
    const edge = edgeStandIn(peer, recipient);
    await peer.flush();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      statuses.push(
        (await request(baseUrl, { body: notifyBody(recipient, { api_key: apiKey }) })).status,
      );
    }
    edge.stop();
    expect(statuses).toEqual([200, 200, 403]);
  });

  it('reports not ready on /readyz', async () => {
    const res = await request(baseUrl, { method: 'GET', path: '/readyz' });
    expect(res.status).toBe(503);
    // The public listener gives the status only; the checks are on the ops listener.
    expect(res.json).toEqual({ status: 'not_ready' });
  });

  it('refuses to start', async () => {
    const other = createIngress(testConfig(nats), {
      nc,
      logger: createLogger('ingress-api', 'silent'),
    });
    await expect(other.start()).rejects.toThrow(/JetStream/i);
    await other.close();
  });
});

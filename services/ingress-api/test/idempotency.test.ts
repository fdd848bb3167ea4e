import { createHash } from 'node:crypto';
import { createLogger, ensureQueueStream } from '@herald/kit';
import { EventHeaders, QUEUE_STREAM } from '@herald/proto';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIngress, IDEMPOTENCY_BUCKET, type Ingress } from '../src/index.js';
import { ACCOUNT_A, ACCOUNT_B, KEYS } from './support/auth-responder.js';
import {
  edgeStandIn,
  type IngressFixture,
  newRecipient,
  notifyBody,
  queuedMessages,
  startIngressFixture,
  testConfig,
} from './support/fixture.js';
import { request } from './support/http.js';

let fx: IngressFixture;
/** A second ingress instance on its own connection, sharing the NATS server (and so the KV bucket). */
let second: { nc: NatsConnection; ingress: Ingress; baseUrl: string };

beforeAll(async () => {
  fx = await startIngressFixture();
  const nc = await connect({ servers: fx.nats.url, name: 'test-ingress-2' });
  const ingress = createIngress(testConfig(fx.nats.url), {
    nc,
    logger: createLogger('ingress-api', 'silent'),
  });
  second = { nc, ingress, baseUrl: `http://127.0.0.1:${await ingress.start(0)}` };
});
afterAll(async () => {
  await second?.ingress.close();
  await second?.nc.close();
  await fx?.stop();
});

let counter = 0;
const newKey = () => `order-${Date.now()}-${++counter}`;
const post = (body: unknown, key: string, baseUrl = fx.baseUrl) =>
  request(baseUrl, { body, headers: { 'idempotency-key': key } });

describe('Idempotency-Key', () => {
  it('stores an offline event once and answers the retry with the same id', async () => {
    const recipient = newRecipient();
    const key = newKey();
    const first = await post(notifyBody(recipient), key);
    const retry = await post(notifyBody(recipient), key);
    expect(first.status).toBe(202);
    expect(retry.status).toBe(202);
    expect(retry.json).toEqual(first.json);
    const stored = await queuedMessages(fx.jsm, recipient);
    expect(stored).toHaveLength(1);
    expect(stored[0]?.header.get(EventHeaders.msgId)).toBe(`${ACCOUNT_A}:${key}`);
  });

  it('pushes an online event once and answers the retry with the same id', async () => {
    const recipient = newRecipient();
    const edge = edgeStandIn(fx.peer, recipient);
    await fx.peer.flush();
    const key = newKey();
    const first = await post(notifyBody(recipient), key);
    const retry = await post(notifyBody(recipient), key);
    await fx.peer.flush();
    edge.stop();
    expect(first.status).toBe(200);
    expect(retry.status).toBe(200);
    expect(retry.json.id).toBe(first.json.id);
    expect(edge.received).toHaveLength(1);
  });

  it('delivers once when two ingress instances race the same key; the loser gets 409 with Retry-After', async () => {
    const recipient = newRecipient();
    // The edge answers slowly, so the second request arrives while the first holds the claim.
    const edge = edgeStandIn(fx.peer, recipient, { delayMs: 150 });
    await fx.peer.flush();
    const key = newKey();
    const results = await Promise.all([
      post(notifyBody(recipient), key),
      post(notifyBody(recipient), key, second.baseUrl),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const busy = results.find((r) => r.status === 409);
    expect(busy?.json.error).toMatchObject({
      code: 'idempotency_in_progress',
      field: 'Idempotency-Key',
    });
    expect(busy?.headers['retry-after']).toBe('1');
    const sentId = results.find((r) => r.status === 200)?.json.id;
    // Retrying on either instance now returns the finished result.
    const retry = await post(notifyBody(recipient), key, second.baseUrl);
    expect(retry.status).toBe(200);
    expect(retry.json.id).toBe(sentId);
    await fx.peer.flush();
    edge.stop();
    expect(edge.received).toHaveLength(1);
  });

  it('stores once when two instances race the same key for an offline recipient', async () => {
    const recipient = newRecipient();
    const key = newKey();
    const results = await Promise.all([
      post(notifyBody(recipient), key),
      post(notifyBody(recipient), key, second.baseUrl),
    ]);
    for (const r of results) expect([202, 409]).toContain(r.status);
    expect(await queuedMessages(fx.jsm, recipient)).toHaveLength(1);
  });

  it('takes over a stale claim left by a dead instance, keeping its event id', async () => {
    const recipient = newRecipient();
    const key = newKey();
    const kv = await fx.peer.jetstream().views.kv(IDEMPOTENCY_BUCKET, { bindOnly: true });
    const staleAt = Date.now() - (fx.config.LIVE_TIMEOUT_MS + fx.config.PUBLISH_TIMEOUT_MS) - 1000;
    await kv.create(
      entryKey(ACCOUNT_A, key),
      JSON.stringify({ state: 'pending', at: staleAt, id: 'id-of-the-dead-attempt' }),
    );
    const res = await post(notifyBody(recipient), key);
    expect(res.status).toBe(202);
    expect(res.json.id).toBe('id-of-the-dead-attempt');
    const stored = await queuedMessages(fx.jsm, recipient);
    expect(stored.map((m) => m.header.get(EventHeaders.id))).toEqual(['id-of-the-dead-attempt']);
  });

  it('answers 409 while a fresh claim is held', async () => {
    const key = newKey();
    const kv = await fx.peer.jetstream().views.kv(IDEMPOTENCY_BUCKET, { bindOnly: true });
    await kv.create(
      entryKey(ACCOUNT_A, key),
      JSON.stringify({ state: 'pending', at: Date.now(), id: 'in-flight' }),
    );
    const res = await post(notifyBody(newRecipient()), key);
    expect(res.status).toBe(409);
    expect(res.headers['retry-after']).toBe('1');
  });

  it('does not remember a 503, so the retry dispatches', async () => {
    const recipient = newRecipient();
    const key = newKey();
    await fx.jsm.streams.delete(QUEUE_STREAM);
    let failed: Awaited<ReturnType<typeof post>>;
    try {
      failed = await post(notifyBody(recipient), key);
    } finally {
      await ensureQueueStream(fx.jsm, {
        maxPerRecipient: fx.config.QUEUE_MAX_PER_RECIPIENT,
        maxMsgSize: fx.config.QUEUE_MAX_MSG_BYTES,
        duplicateWindowMs: fx.config.IDEMPOTENCY_TTL_MS,
      });
    }
    expect(failed.status).toBe(503);
    const retry = await post(notifyBody(recipient), key);
    expect(retry.status).toBe(202);
    expect(await queuedMessages(fx.jsm, recipient)).toHaveLength(1);
  });

  it('scopes keys per account', async () => {
    const recipient = newRecipient();
    const key = newKey();
    const a = await post(notifyBody(recipient), key);
    const b = await post(notifyBody(recipient, { api_key: KEYS.accountB }), key);
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    expect(b.json.id).not.toBe(a.json.id);
    expect(await queuedMessages(fx.jsm, recipient, ACCOUNT_A)).toHaveLength(1);
    expect(await queuedMessages(fx.jsm, recipient, ACCOUNT_B)).toHaveLength(1);
  });
});

function entryKey(account: string, key: string): string {
  return `${account}.${createHash('sha256').update(key).digest('hex')}`;
}

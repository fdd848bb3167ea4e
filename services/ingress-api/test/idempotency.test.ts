import { createHash } from 'node:crypto';
import { createLogger, type Serving, serve } from '@herald/kit';
import { EventHeaders } from '@herald/proto';
import { ensureQueueStream, queueStreamOf } from '@herald/queue';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDEMPOTENCY_BUCKET } from '../src/idempotency.js';
import { createIngress, type Ingress } from '../src/index.js';
import { ACCOUNT_A, ACCOUNT_B, KEYS, WEB_ORIGIN } from './support/auth-responder.js';
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
let second: { nc: NatsConnection; ingress: Ingress; serving: Serving; baseUrl: string };

beforeAll(async () => {
  fx = await startIngressFixture();
  const nc = await connect({ ...fx.nats.connectOptions(), name: 'test-ingress-2' });
  const config = testConfig(fx.nats);
  const ingress = createIngress(config, { nc, logger: createLogger('ingress-api', 'silent') });
  const serving = await serve(ingress, config, 0);
  second = { nc, ingress, serving, baseUrl: `http://127.0.0.1:${serving.port}` };
});
afterAll(async () => {
  await second?.serving.close();
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

  it.each([
    ['payload', (r: string) => notifyBody(r, { payload: { title: 'something else' } }), {}],
    ['recipient', () => notifyBody(newRecipient()), {}],
    // Another key of the same account (keys are scoped per account), used from the web.
    [
      'client',
      (r: string) => notifyBody(r, { api_key: KEYS.web, client: 'web' }),
      { origin: WEB_ORIGIN },
    ],
  ])(
    'refuses the key reused with another %s: 422 idempotency_key_reused, nothing stored',
    async (_n, other, extra) => {
      const recipient = newRecipient();
      const key = newKey();
      const first = await post(notifyBody(recipient), key);
      expect(first.status).toBe(202);
      const body = other(recipient);
      const reuse = (baseUrl: string) =>
        request(baseUrl, { body, headers: { 'idempotency-key': key, ...extra } });
      const reused = await reuse(fx.baseUrl);
      expect(reused.status).toBe(422);
      expect(reused.json.error).toMatchObject({
        code: 'idempotency_key_reused',
        field: 'Idempotency-Key',
      });
      expect(reused.json.error.message).toMatch(/Idempotency-Key/);
      // On the other instance too, and while the first request's answer stays what it was.
      expect((await reuse(second.baseUrl)).status).toBe(422);
      const same = await post(notifyBody(recipient), key, second.baseUrl);
      expect(same.status).toBe(202);
      expect(same.json).toEqual(first.json);
      expect(await queuedMessages(fx.jsm, recipient)).toHaveLength(1);
      const otherRecipient = String(body.recipient);
      if (otherRecipient !== recipient)
        expect(await queuedMessages(fx.jsm, otherRecipient)).toHaveLength(0);
    },
  );

  it('refuses a reuse with another body while the first request is still in flight', async () => {
    const recipient = newRecipient();
    const edge = edgeStandIn(fx.peer, recipient, { delayMs: 300 });
    await fx.peer.flush();
    const key = newKey();
    const first = post(notifyBody(recipient), key);
    // The claim is written before the live push, which the stand-in holds for 300 ms.
    await eventuallyClaimed(key);
    const reused = await post(notifyBody(recipient, { payload: [1, 2, 3] }), key, second.baseUrl);
    expect(reused.status).toBe(422);
    expect((await first).status).toBe(200);
    await fx.peer.flush();
    edge.stop();
    expect(edge.received).toHaveLength(1);
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
    // The recipient's partition only: the dispatch finds no stream to store in.
    await fx.jsm.streams.delete(queueStreamOf(ACCOUNT_A, recipient));
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

async function eventuallyClaimed(key: string): Promise<void> {
  const kv = await fx.peer.jetstream().views.kv(IDEMPOTENCY_BUCKET, { bindOnly: true });
  for (let i = 0; i < 500; i++) {
    if ((await kv.get(entryKey(ACCOUNT_A, key)))?.operation === 'PUT') return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the first request never claimed its Idempotency-Key');
}

function entryKey(account: string, key: string): string {
  return `${account}.${createHash('sha256').update(key).digest('hex')}`;
}

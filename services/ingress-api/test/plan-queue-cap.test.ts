import { randomUUID } from 'node:crypto';
import { EventHeaders, subjects } from '@herald/proto';
import { queueConsumerConfig, queueStreamOf } from '@herald/queue';
import type { ConsumerConfig } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_A, answerFor, key, ROOMY_LIMITS } from './support/auth-responder.js';
import {
  edgeStandIn,
  type IngressFixture,
  newRecipient,
  notifyBody,
  queuedMessages,
  settle,
  startIngressFixture,
} from './support/fixture.js';
import { request } from './support/http.js';

const CAP = 3;
let fx: IngressFixture;
let apiKey: string;

beforeAll(async () => {
  // The stream's own ceiling stays at its default (10000): the plan's cap is the lower one. No
  // scan cache, so every check below reads the queue afresh.
  fx = await startIngressFixture({ QUEUE_DEPTH_SCAN_CACHE_MS: '0' });
  apiKey = `hk_live_${randomUUID()}`;
  answerFor(
    apiKey,
    key(`key-${randomUUID()}`, {
      plan: 'hobby',
      limits: { ...ROOMY_LIMITS, queue_per_recipient: CAP },
    }),
  );
});
afterAll(async () => {
  await fx?.stop();
});

const post = (recipient: string, n: number) =>
  request(fx.baseUrl, { body: notifyBody(recipient, { api_key: apiKey, payload: { n } }) });

describe("the plan's cap on a recipient's queue", () => {
  it('refuses the event past the cap with 507 queue_full naming the depth, keeping the first ones', async () => {
    const recipient = newRecipient();
    const ids: string[] = [];
    for (let n = 0; n < CAP; n++) {
      const res = await post(recipient, n);
      expect(res.status).toBe(202);
      ids.push(res.json.id);
    }
    const refused = await post(recipient, CAP);
    expect(refused.status).toBe(507);
    expect(refused.json.error).toMatchObject({ code: 'queue_full', field: 'recipient' });
    expect(refused.json.error.message).toMatch(
      /already has 3 undelivered events queued and the hobby plan allows 3 per recipient.*nothing older was dropped/,
    );
    const stored = await queuedMessages(fx.jsm, recipient);
    expect(stored.map((m) => m.header.get(EventHeaders.id))).toEqual(ids);
    // The cap is on what waits, not on delivery: a connected recipient still gets it live.
    const edge = edgeStandIn(fx.peer, recipient);
    await settle(fx.peer);
    expect((await post(recipient, 99)).status).toBe(200);
    edge.stop();
  });

  it('counts only undelivered events once an edge has drained some (consumer ack floor)', async () => {
    const recipient = newRecipient();
    for (let n = 0; n < CAP; n++) expect((await post(recipient, n)).status).toBe(202);
    expect((await post(recipient, CAP)).status).toBe(507);
    // Drain two as an edge does; they stay stored until retention's weekly purge.
    const config = queueConsumerConfig(ACCOUNT_A, recipient);
    await fx.jsm.consumers.add(
      queueStreamOf(ACCOUNT_A, recipient),
      config as unknown as Partial<ConsumerConfig>,
    );
    const consumer = await fx.peer
      .jetstream()
      .consumers.get(queueStreamOf(ACCOUNT_A, recipient), config.durable_name);
    const batch = await consumer.fetch({ max_messages: 2, expires: 2000 });
    for await (const msg of batch) msg.ack();
    await fx.peer.flush();
    expect((await post(recipient, 10)).status).toBe(202);
    expect((await post(recipient, 11)).status).toBe(202);
    const refused = await post(recipient, 12);
    expect(refused.status).toBe(507);
    expect(refused.json.error.message).toContain('already has 3 undelivered');
    expect(await queuedMessages(fx.jsm, recipient)).toHaveLength(5);
  });

  it("counts exactly when other recipients' events interleave with this one's", async () => {
    const recipient = newRecipient();
    expect((await post(recipient, 0)).status).toBe(202);
    // Enough events for others that first..last on this subject spans more than the cap.
    for (let i = 0; i < CAP; i++) expect((await post(newRecipient(), i)).status).toBe(202);
    expect((await post(recipient, 1)).status).toBe(202);
    for (let i = 0; i < CAP; i++) expect((await post(newRecipient(), i)).status).toBe(202);
    expect((await post(recipient, 2)).status).toBe(202);
    const refused = await post(recipient, 3);
    expect(refused.status).toBe(507);
    expect(refused.json.error.message).toContain('already has 3 undelivered');
  });

  it('leaves the check to the stream when the plan allows as much as QUEUE_MAX_PER_RECIPIENT', async () => {
    // ROOMY_LIMITS' queue_per_recipient equals the stream's default ceiling: no plan check.
    const recipient = newRecipient();
    for (let n = 0; n < CAP + 2; n++) {
      const res = await request(fx.baseUrl, { body: notifyBody(recipient, { payload: { n } }) });
      expect(res.status).toBe(202);
    }
  });
});

describe("the plan's cap with a kept count (QUEUE_DEPTH_SCAN_CACHE_MS)", () => {
  let kept: IngressFixture;
  beforeAll(async () => {
    kept = await startIngressFixture({ QUEUE_DEPTH_SCAN_CACHE_MS: '1000' });
  });
  afterAll(async () => {
    await kept?.stop();
  });
  const postKept = (recipient: string, n: number) =>
    request(kept.baseUrl, { body: notifyBody(recipient, { api_key: apiKey, payload: { n } }) });

  it("stops a burst exactly at the cap: this instance's stores advance the kept count", async () => {
    const recipient = newRecipient();
    const statuses = [];
    for (let n = 0; n < CAP + 2; n++) statuses.push((await postKept(recipient, n)).status);
    expect(statuses).toEqual([202, 202, 202, 507, 507]);
    expect(await queuedMessages(kept.jsm, recipient)).toHaveLength(CAP);
  });

  it("sees another instance's stores once the kept count is older than the window", async () => {
    const recipient = newRecipient();
    expect((await postKept(recipient, 0)).status).toBe(202);
    // Another instance (the fixture's peer publishing as ingress would) fills the queue past the cap.
    const js = kept.peer.jetstream();
    for (let n = 1; n <= CAP; n++)
      await js.publish(
        subjects.queue(ACCOUNT_A, recipient),
        new TextEncoder().encode(`{"n":${n}}`),
      );
    // Within the window this instance still counts 1 (the documented tolerance)...
    expect((await postKept(recipient, 10)).status).toBe(202);
    await new Promise((r) => setTimeout(r, 1100));
    // ...and past it reads the queue afresh: full.
    const refused = await postKept(recipient, 11);
    expect(refused.status).toBe(507);
    expect(refused.json.error.code).toBe('queue_full');
  });
});

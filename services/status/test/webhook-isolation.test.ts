import { randomBytes } from 'node:crypto';
import { WEBHOOK_API_SUBJECT } from '@herald/proto';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type InboxFixture, request, startInboxFixture, uuid } from './support.js';
import { Receiver } from './webhook-receiver.js';

/*
 * A dead endpoint (it never answers) holds its requests for the whole timeout. These tests make
 * the timeout the longest allowed (120 s, so no request of the file times out on a loaded box:
 * a freed slot would let the probe of the second test be claimed) and show, by what the receiver sees while those requests still hang,
 * that the healthy endpoint's messages never waited behind them, and where each concurrency
 * bound stops.
 */
const PER_ENDPOINT = 2;
const GLOBAL = 6;
const MESSAGES = 30;

let rx: Receiver;
let f: InboxFixture;
let auth: NatsConnection;
beforeAll(async () => {
  rx = await Receiver.start();
  f = await startInboxFixture({
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_CA_FILE: rx.caFile,
    WEBHOOK_TIMEOUT_MS: '120000',
    WEBHOOK_POLL_MS: '50',
    WEBHOOK_ENDPOINT_CONCURRENCY: String(PER_ENDPOINT),
    WEBHOOK_CONCURRENCY: String(GLOBAL),
    WEBHOOK_DRAIN_MS: '0',
  });
  auth = await f.client('auth');
});
afterAll(async () => {
  await rx?.stop();
  await f?.close();
});

const ask = (body: Record<string, unknown>) =>
  request(auth, WEBHOOK_API_SUBJECT, { v: 1, ...body });

async function endpoint(path: string): Promise<string> {
  const r = await ask({ op: 'create', account_id: uuid(), url: rx.url(path) });
  expect(r.ok, JSON.stringify(r)).toBe(true);
  return r.endpoint.id;
}

/** Queues `n` test messages; returns when each was queued (epoch ms) by message id. */
async function queueTests(id: string, n: number): Promise<Map<string, number>> {
  const queued = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const at = Date.now();
    const t = await ask({ op: 'test', id });
    expect(t.ok).toBe(true);
    queued.set(t.message_id, at);
  }
  return queued;
}

/** Lag of each arrival at `path` from when its message was queued, sorted, ms. */
function lags(path: string, queued: Map<string, number>): number[] {
  return rx
    .at(path)
    .map((a) => a.at - (queued.get(a.id) ?? a.at))
    .sort((x, y) => x - y);
}

const p99 = (sorted: number[]) => sorted[Math.ceil(sorted.length * 0.99) - 1] ?? 0;
const hangingAt = (path: string) => rx.hanging.get(path)?.size ?? 0;

describe("one account's dead endpoint and another's healthy one", () => {
  it('the healthy endpoint is served while the dead one holds its requests, at most WEBHOOK_ENDPOINT_CONCURRENCY of them', async () => {
    const healthy = `/healthy-${uuid()}`;
    const healthyId = await endpoint(healthy);
    // Alone first: the healthy endpoint's own lag.
    const alone = await queueTests(healthyId, MESSAGES);
    await eventually(() => rx.ids(healthy).size === MESSAGES, 'alone: every message arrives');
    const aloneP99 = p99(lags(healthy, alone));

    const dead = `/dead-${uuid()}`;
    rx.behave.set(dead, () => 'hang');
    const deadId = await endpoint(dead);
    await queueTests(deadId, MESSAGES);
    await eventually(() => hangingAt(dead) === PER_ENDPOINT, 'the dead endpoint holds its slots');

    const healthy2 = `/healthy2-${uuid()}`;
    const healthy2Id = await endpoint(healthy2);
    const beside = await queueTests(healthy2Id, MESSAGES);
    await eventually(() => rx.ids(healthy2).size === MESSAGES, 'beside: every message arrives');
    const besideP99 = p99(lags(healthy2, beside));
    // Every healthy message arrived while the dead endpoint's first requests still hang: none
    // waited for their timeout, and the dead endpoint never took more than its own slots.
    expect(hangingAt(dead)).toBe(PER_ENDPOINT);
    expect(rx.at(dead)).toHaveLength(PER_ENDPOINT);
    expect(rx.maxHanging.get(dead)).toBe(PER_ENDPOINT);
    expect((await ask({ op: 'attempts', id: deadId })).attempts).toEqual([]);
    expect(besideP99).toBeLessThan(20_000);
    console.log(
      `healthy endpoint p99 lag: alone ${aloneP99} ms, beside a dead endpoint ${besideP99} ms`,
    );
  });

  it('WEBHOOK_CONCURRENCY bounds the requests in flight over every endpoint', async () => {
    // Four more dead endpoints want 4 × 2 slots; with the first test's 2 held, 6 is the most.
    const paths = Array.from({ length: 4 }, () => `/dead-many-${uuid()}`);
    for (const p of paths) {
      rx.behave.set(p, () => 'hang');
      await queueTests(await endpoint(p), 5);
    }
    const total = () => [...rx.hanging.values()].reduce((s, set) => s + set.size, 0);
    await eventually(() => total() === GLOBAL, 'every global slot taken');
    // The sender claims ahead of its request slots (WEBHOOK_ENDPOINT_PREFETCH): a probe endpoint's
    // message is claimed and held like any other. Once it is held, a sender that could exceed the
    // bound would start it at its next dispatch; this one must not while every slot hangs.
    const probePath = `/probe-${uuid()}`;
    const probe = await endpoint(probePath);
    await queueTests(probe, 1);
    await eventually(
      async () =>
        (
          await f.db
            .selectFrom('webhook_messages')
            .select('seq')
            .where('endpoint_id', '=', probe)
            .where('leased_until', '>', new Date())
            .execute()
        ).length === 1,
      'the sender holds the probe',
      30_000,
    );
    // Ten polls and dispatches later, still nothing started beyond the bound.
    await new Promise((r) => setTimeout(r, 10 * 50));
    expect(total()).toBe(GLOBAL);
    expect(rx.at(probePath)).toEqual([]);
    for (const p of paths) expect(rx.maxHanging.get(p) ?? 0).toBeLessThanOrEqual(PER_ENDPOINT);
  });
});

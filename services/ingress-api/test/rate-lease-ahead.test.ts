import { createLogger } from '@herald/kit';
import { type NatsServer, startNatsServer } from '@herald/testkit';
import { connect, type KV, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DispatchRateLimiter, RATE_BUCKET } from '../src/rate-limiter.js';
import { maxHeld, maxLease } from '../src/token-bucket.js';
import { gatedKv, rateKey } from './support/rate-kv.js';

// One limiter (or two) on a real KV bucket, with a clock that only moves when a test moves it:
// no refill and no expiry unless asked, so every count below is exact.
const LEASE_MS = 1000;
const BATCH_MS = 100;

let nats: NatsServer;
let nc: NatsConnection;
let kv: KV;

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connect({ ...nats.connectOptions(), name: 'test-rate-lease' });
  kv = await nc.jetstream().views.kv(RATE_BUCKET, { history: 1 });
});

afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

function limiter(clock: { now: number }, kvOf: () => Promise<KV> = async () => kv) {
  return new DispatchRateLimiter(kvOf, {
    leaseMs: LEASE_MS,
    leaseBatchMs: BATCH_MS,
    logger: createLogger('ingress-api', 'silent'),
    now: () => clock.now,
  });
}

async function bucketTokens(id: string): Promise<number> {
  const entry = await kv.get(id);
  if (!entry) throw new Error(`no bucket state for ${id}`);
  return entry.json<{ tokens: number }>().tokens;
}

describe('the dispatch rate lease renewed ahead', () => {
  it('holds at most maxLease + floor(maxLease / 2) tokens per instance, and reaches it', async () => {
    // rate 100/s, lease batch 100 ms: max lease 10, held at most 15.
    const k = rateKey(100, 1000);
    expect(maxLease(k.limits, BATCH_MS)).toBe(10);
    expect(maxHeld(k.limits, BATCH_MS)).toBe(15);
    const l = limiter({ now: 1_000_000 });
    const held: number[] = [];
    for (let spent = 1; spent <= 80; spent++) {
      await l.take(k);
      await l.settled();
      // Taken from the shared bucket and not yet spent: this instance's lease and the next one.
      held.push(1000 - (await bucketTokens(k.id)) - spent);
    }
    expect(Math.max(...held)).toBe(15);
  });

  it('spends a leased token at once with takeNow, and leaves a key with no lease to take', async () => {
    const k = rateKey(100, 1000);
    const l = limiter({ now: 1_000_000 });
    // Nothing leased yet: takeNow spends nothing and asks nothing of the shared state.
    expect(l.takeNow(k)).toBe(false);
    await l.settled();
    await expect(kv.get(k.id)).resolves.toBeNull();
    // take leases (one token, spent), and the lease grows as it is spent.
    await l.take(k);
    await l.settled();
    for (let i = 0; i < 10; i++) {
      if (!l.takeNow(k)) await l.take(k);
      await l.settled();
    }
    // A leased token is spent synchronously: the shared bucket only ever moved by whole leases.
    let now = 0;
    while (l.takeNow(k)) now++;
    expect(now).toBeGreaterThan(0);
    await l.settled();
    // 12 tokens spent in all plus what the instance still holds, never more than maxHeld.
    const held = 1000 - (await bucketTokens(k.id)) - (11 + now);
    expect(held).toBeGreaterThanOrEqual(0);
    expect(held).toBeLessThanOrEqual(maxHeld(k.limits, BATCH_MS));
  });

  it('lets dispatches spend the lease while its renewal waits for the shared state', async () => {
    const k = rateKey(100, 1000);
    const gate = gatedKv(kv);
    const l = limiter({ now: 1_000_000 }, gate.kv);
    // Grow the lease to its largest (10) with the gate open.
    for (let i = 0; i < 40; i++) {
      await l.take(k);
      await l.settled();
    }
    gate.close();
    // The renewal ahead starts at the latest once half of the lease is spent; the other half
    // (at least 5 tokens) is spent while it waits at the gate.
    let answered = 0;
    const waiting: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) {
      const p = l.take(k).then(() => {
        answered++;
      });
      waiting.push(p);
    }
    // Whatever the gate holds, dispatches with a token in hand have their answer at once.
    await new Promise((r) => setImmediate(r));
    expect(answered).toBeGreaterThanOrEqual(5);
    expect(answered).toBeLessThan(20);
    gate.open();
    await Promise.all(waiting);
    expect(answered).toBe(20);
  });

  it('never hands a token out twice across two instances renewing ahead', async () => {
    const k = rateKey(100, 37);
    const clock = { now: 2_000_000 };
    const instances = [limiter(clock), limiter(clock)];
    let accepted = 0;
    let refusedInARow = 0;
    for (let i = 0; refusedInARow < 2; i++) {
      const l = instances[i % 2] as DispatchRateLimiter;
      try {
        await l.take(k);
        await l.settled();
        accepted++;
        refusedInARow = 0;
      } catch (err) {
        expect(err).toMatchObject({ code: 'rate_limited' });
        refusedInARow++;
      }
    }
    expect(accepted).toBe(37);
  });

  it('renews ahead a quarter of the lease before its expiry, with half the size when half is unspent', async () => {
    const k = rateKey(100, 1000);
    const clock = { now: 3_000_000 };
    const l = limiter(clock);
    // Lease sizes 1, 2, 4, 8, each renewed ahead once half spent: after 8 takes the current
    // lease is the one of 8, with 7 left and nothing renewed ahead yet.
    for (let i = 0; i < 8; i++) {
      await l.take(k);
      await l.settled();
    }
    const before = await bucketTokens(k.id);
    // Late in the lease's life (less than a quarter of RATE_LEASE_MS left), more than half unspent.
    const elapsedMs = LEASE_MS - LEASE_MS / 4 + 1;
    clock.now += elapsedMs;
    await l.take(k);
    await l.settled();
    const after = await bucketTokens(k.id);
    // 6 of 8 left when the quarter is reached: the lease renewed ahead is half as large (4),
    // taken from the bucket as refilled over the elapsed time (100/s, never above the burst).
    expect(after).toBe(Math.min(1000, before + (100 * elapsedMs) / 1000) - 4);
  });
});

import { createLogger } from '@herald/kit';
import { HeraldError } from '@herald/proto';
import { type NatsServer, startNatsServer } from '@herald/testkit';
import { connect, type KV, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DispatchRateLimiter, RATE_BUCKET } from '../src/rate-limiter.js';
import { maxHeld, maxLease, retryAfterSeconds } from '../src/token-bucket.js';
import { gatedKv, rateKey } from './support/rate-kv.js';

// Concurrent dispatches of one key against a real KV bucket: a burst that fits in the bucket is
// accepted whole, whatever the lease size, and a dispatch is refused only when the shared bucket
// has no token, with the honest Retry-After.
const LEASE_MS = 1000;
const BATCH_MS = 100;

let nats: NatsServer;
let nc: NatsConnection;
let kv: KV;

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connect({ ...nats.connectOptions(), name: 'test-rate-concurrent' });
  kv = await nc.jetstream().views.kv(RATE_BUCKET, { history: 1 });
});

afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

function limiter(now: () => number, kvOf: () => Promise<KV> = async () => kv) {
  return new DispatchRateLimiter(kvOf, {
    leaseMs: LEASE_MS,
    leaseBatchMs: BATCH_MS,
    logger: createLogger('ingress-api', 'silent'),
    now,
  });
}

interface Outcome {
  accepted: number;
  /** Retry-After (s) of each refusal; anything but `rate_limited` fails the test. */
  retryAfter: number[];
}

async function fire(takes: Promise<void>[]): Promise<Outcome> {
  const settled = await Promise.allSettled(takes);
  const out: Outcome = { accepted: 0, retryAfter: [] };
  for (const s of settled) {
    if (s.status === 'fulfilled') {
      out.accepted++;
      continue;
    }
    const err = s.reason;
    if (!(err instanceof HeraldError) || err.code !== 'rate_limited') throw err;
    out.retryAfter.push(err.retryAfter as number);
  }
  return out;
}

const concurrently = (n: number, take: () => Promise<void>) =>
  fire(Array.from({ length: n }, () => take()));

describe('concurrent dispatches of one key (fake clock: no refill, no expiry)', () => {
  // The audit's Test key (10/s, burst 100: max lease 1 token), and a slow key whose next token
  // is 2 s away, so a Retry-After of 1 s would be a lie.
  for (const [rate, burst] of [
    [10, 100],
    [0.5, 40],
    [500, 300],
  ] as const) {
    it(`accepts a burst of ${burst} concurrent takes at a full bucket (${rate}/s), then refuses with Retry-After ${retryAfterSeconds(1000 / rate)} s`, async () => {
      const k = rateKey(rate, burst);
      const l = limiter(() => 1_000_000);
      const burstOutcome = await concurrently(burst, () => l.take(k));
      expect(burstOutcome).toEqual({ accepted: burst, retryAfter: [] });
      const next = await concurrently(1, () => l.take(k));
      expect(next).toEqual({ accepted: 0, retryAfter: [retryAfterSeconds(1000 / rate)] });
      await l.settled();
    });
  }

  it('accepts exactly the burst out of burst + k concurrent takes; the rest wait for the next token', async () => {
    const k = rateKey(10, 100);
    expect(maxLease(k.limits, BATCH_MS)).toBe(1);
    const l = limiter(() => 2_000_000);
    const outcome = await concurrently(130, () => l.take(k));
    expect(outcome.accepted).toBe(100);
    expect(outcome.retryAfter).toEqual(Array(30).fill(1));
    await l.settled();
  });

  it('serves takes that arrive while a renewal is in flight, in turn, up to the burst', async () => {
    const k = rateKey(4, 60);
    const gate = gatedKv(kv);
    const l = limiter(() => 3_000_000, gate.kv);
    gate.close();
    const first = Array.from({ length: 25 }, () => l.take(k));
    await new Promise((r) => setImmediate(r));
    const second = Array.from({ length: 50 }, () => l.take(k));
    gate.open();
    const a = await fire(first);
    const b = await fire(second);
    // First come, first served: the earlier wave is served whole before the later one.
    expect(a).toEqual({ accepted: 25, retryAfter: [] });
    expect(b.accepted).toBe(35);
    expect(b.retryAfter).toEqual(Array(15).fill(1));
    await l.settled();
  });

  it('shares the burst between two instances taking concurrently: exactly the burst in all', async () => {
    const k = rateKey(10, 120);
    const clock = () => 4_000_000;
    const instances = [limiter(clock), limiter(clock)];
    const takes = Array.from({ length: 200 }, (_, i) =>
      (instances[i % 2] as DispatchRateLimiter).take(k),
    );
    const outcome = await fire(takes);
    await Promise.all(instances.map((l) => l.settled()));
    expect(new Set(outcome.retryAfter)).toEqual(new Set([1]));
    // What an instance still holds of its lease (at most maxHeld) is not the other's to spend:
    // spending it too gives exactly the burst, never a token twice, none lost.
    let held = 0;
    for (const l of instances) {
      for (;;) {
        const one = await concurrently(1, () => l.take(k));
        if (one.accepted === 0) break;
        held++;
      }
      await l.settled();
    }
    expect(held).toBeLessThanOrEqual(2 * maxHeld(k.limits, BATCH_MS));
    expect(outcome.accepted + held).toBe(120);
  });
});

describe('what a concurrent burst leaves held', () => {
  it('leases the waiters their tokens on top of the lease: still at most maxHeld held after', async () => {
    // rate 100/s, lease batch 100 ms: max lease 10, held at most 15.
    const k = rateKey(100, 1000);
    const l = limiter(() => 5_000_000);
    for (const wave of [200, 3, 57, 1, 120]) {
      const outcome = await concurrently(wave, () => l.take(k));
      expect(outcome.accepted).toBe(wave);
      await l.settled();
    }
    const entry = await kv.get(k.id);
    const spent = 200 + 3 + 57 + 1 + 120;
    const held = 1000 - (entry?.json<{ tokens: number }>().tokens ?? 1000) - spent;
    expect(held).toBeGreaterThanOrEqual(0);
    expect(held).toBeLessThanOrEqual(maxHeld(k.limits, BATCH_MS));
  });

  it('counts waiting dispatches on this instance alone when the shared state does not answer', async () => {
    const k = rateKey(10, 30);
    const down = async (): Promise<KV> => {
      throw new Error('no JetStream');
    };
    const l = limiter(() => 6_000_000, down);
    const outcome = await concurrently(45, () => l.take(k));
    expect(outcome.accepted).toBe(30);
    expect(outcome.retryAfter).toEqual(Array(15).fill(1));
    await l.settled();
  });
});

describe('concurrent dispatches of one key (real clock)', () => {
  it('accepts the burst of burst + k concurrent takes, and no more than refilled meanwhile', async () => {
    const RATE = 10;
    const BURST = 100;
    const k = rateKey(RATE, BURST);
    const l = limiter(Date.now);
    const started = Date.now();
    const outcome = await concurrently(BURST + 30, () => l.take(k));
    const elapsedMs = Date.now() - started;
    // A key not seen lately starts with a full bucket; it refills RATE per second meanwhile.
    expect(outcome.accepted).toBeGreaterThanOrEqual(BURST);
    expect(outcome.accepted).toBeLessThanOrEqual(BURST + Math.floor((RATE * elapsedMs) / 1000));
    for (const s of outcome.retryAfter) expect(s).toBe(1);
    await l.settled();
  });
});

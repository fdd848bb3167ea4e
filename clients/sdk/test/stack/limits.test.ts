import { randomUUID } from 'node:crypto';
import { DispatchStatus, Herald, type HeraldError } from '@herald/sdk';
import { type Stack, startStack } from '@herald/testkit';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually, recipient, sleep } from './context.js';
import { tlsRuntime } from './tls-runtime.js';

/** Roomy limits, and the Hobby plan's set low so the SDK meets each limit cheaply. */
const ROOMY = {
  connections: 10_000,
  dispatch_rate: 100_000,
  dispatch_burst: 100_000,
  queue_per_recipient: 100_000,
};
const TIGHT = { connections: 1, dispatch_rate: 1, dispatch_burst: 2, queue_per_recipient: 100_000 };
const PLANS = {
  plans: [
    { id: 'free', name: 'Free', paid: false, limits: ROOMY, price: { usd: 0, kes: 0 } },
    { id: 'hobby', name: 'Hobby', paid: true, limits: TIGHT, price: { usd: 9, kes: 1200 } },
    { id: 'startup', name: 'Startup', paid: true, limits: ROOMY, price: { usd: 49, kes: 6500 } },
  ],
  test_key_limits: ROOMY,
};

// The server's limit codes reach the SDK's users as typed outcomes, on a real stack: what the
// unit tests check against a fake socket and fetch.
describe('@herald/sdk (built) and the plan limits, against the real stack', () => {
  let stack: Stack;
  const heralds: Herald[] = [];
  const runtimes: Array<ReturnType<typeof tlsRuntime>> = [];
  beforeAll(async () => {
    stack = await startStack({ plans: PLANS });
  });
  afterEach(async () => {
    for (const h of heralds.splice(0)) h.disconnect();
    await Promise.all(runtimes.splice(0).map((rt) => rt.close()));
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** A Live mobile key of a new account on Hobby (the tight plan), paid until `until`. */
  const hobbyKey = async (until = new Date(Date.now() + 86_400_000).toISOString()) => {
    const { id } = await stack.createAccount({ plan: 'hobby', until });
    const key = await stack.createKey({ account: id, kind: 'live', client: 'mobile' });
    return { account: id, key: key.key };
  };
  const herald = (apiKey: string) => {
    const rt = tlsRuntime(stack.ca);
    runtimes.push(rt);
    const h = new Herald({
      apiKey,
      client: 'mobile',
      baseUrl: stack.baseUrl,
      wsUrl: stack.wsUrl,
      WebSocket: rt.WebSocket,
      fetch: rt.fetch,
      backoff: { baseMs: 10, capMs: 60_000 },
    });
    heralds.push(h);
    return { h, rt };
  };

  it("a notify over the key's dispatch rate resolves failed with 403 rate_limited and Retry-After", async () => {
    const { key } = await hobbyKey();
    const { h } = herald(key);
    const to = recipient();
    // Burst 2 at 1/s: of five sent together, at least the two of the burst pass and the rest are
    // refused (a slow machine may refill one token meanwhile); none of them rejects.
    const results = await Promise.all(
      [0, 1, 2, 3, 4].map((n) => h.notify({ recipient: to, payload: { n } })),
    );
    const refused = results.filter((r) => r.httpStatus === 403);
    const accepted = results.filter((r) => r.httpStatus === 202);
    expect(accepted.length + refused.length).toBe(5);
    expect(accepted.length).toBeGreaterThanOrEqual(2);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) {
      expect(r).toMatchObject({ status: DispatchStatus.failed, error: { code: 'rate_limited' } });
      expect(r.error?.retryAfter).toBeGreaterThanOrEqual(1);
    }
  });

  it("a socket over the account's connection cap gets 4429 connection_limit and no immediate retry", async () => {
    const { key } = await hobbyKey();
    const first = herald(key);
    first.h.subscribe(recipient());
    await eventually(() => first.h.connected(), 'the first socket');
    const second = herald(key);
    const errors: HeraldError[] = [];
    second.h.subscribe(recipient()).onError((e) => errors.push(e));
    await eventually(() => errors.length === 1, 'the refusal');
    expect(errors[0]).toMatchObject({ code: 'connection_limit', closeCode: 4429 });
    // A 4429 waits between capMs/2 and capMs (30–60 s here), not the 10 ms base.
    await sleep(600);
    expect(second.rt.wire).toHaveLength(1);
    expect(second.h.connected()).toBe(false);
    expect(first.h.connected()).toBe(true);
  });

  it('a lapsed plan closes the open socket with 4403 plan_inactive (no retry) and notify resolves 403', async () => {
    const { account, key } = await hobbyKey();
    const { h, rt } = herald(key);
    const states: string[] = [];
    h.onConnectionChange((s) => states.push(s));
    const errors: HeraldError[] = [];
    h.subscribe(recipient()).onError((e) => errors.push(e));
    await eventually(() => h.connected(), 'connected');
    // Support moves the period end into the past: the plan has lapsed.
    await stack.admin([
      'account',
      'set-plan',
      '--account',
      account,
      '--plan',
      'hobby',
      '--until',
      new Date(Date.now() - 60_000).toISOString(),
      '--json',
    ]);
    await eventually(() => errors.length === 1, 'the lapse close');
    expect(errors[0]).toMatchObject({ code: 'plan_inactive', closeCode: 4403 });
    await sleep(300);
    expect(rt.wire).toHaveLength(1);
    expect(states).toEqual(['connected', 'disconnected']);
    const r = await h.notify({ recipient: randomUUID(), payload: 1 });
    expect(r).toMatchObject({
      status: DispatchStatus.failed,
      httpStatus: 403,
      error: { code: 'plan_inactive' },
    });
  });

  it('a Test key that expires under an open socket closes it with 4401 key_expired (no retry); notify resolves 401', async () => {
    const { id: account } = await stack.createAccount();
    const key = await stack.createKey({ account, kind: 'test', client: 'mobile' });
    // Age the key instead of waiting 4 hours: its expiry moves to 4 s from now, before first use.
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      await db.query(
        "update api_keys set expires_at = now() + interval '4 seconds' where id = $1",
        [key.id],
      );
    } finally {
      await db.end();
    }
    const { h, rt } = herald(key.key);
    const errors: HeraldError[] = [];
    h.subscribe(recipient()).onError((e) => errors.push(e));
    await eventually(() => h.connected(), 'connected');
    await eventually(() => errors.length === 1, 'the expiry close', 15_000);
    expect(errors[0]).toMatchObject({ code: 'key_expired', closeCode: 4401 });
    await sleep(300);
    expect(rt.wire).toHaveLength(1);
    const r = await h.notify({ recipient: randomUUID(), payload: 1 });
    expect(r).toMatchObject({
      status: DispatchStatus.failed,
      httpStatus: 401,
      error: { code: 'key_expired' },
    });
  });
});

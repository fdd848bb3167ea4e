import { randomUUID } from 'node:crypto';
import {
  type DarajaSimulator,
  SANDBOX_PASSKEY,
  SANDBOX_SHORTCODE,
  SIM_CONSUMER_KEY,
  SIM_CONSUMER_SECRET,
  startDarajaSimulator,
  TEST_PHONES,
} from '@herald/payments/simulator';
import { freePort, post, request, type Stack, startStack } from '@herald/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The whole stack: a lapsed account pays through the Daraja simulator and its existing Live key
// works again on ingress. No callback reaches auth here (its URL is unreachable), so auth's own
// scheduled query settles the payment, as in production when Daraja's callback is lost.
let sim: DarajaSimulator;
let stack: Stack;

beforeAll(async () => {
  sim = await startDarajaSimulator({ resultDelayMs: null });
  stack = await startStack({
    env: {
      auth: {
        BILLING_PROVIDER: 'mpesa',
        BILLING_CALLBACK_URL: `https://localhost:${await freePort()}`,
        MPESA_BASE_URL: sim.url,
        MPESA_CONSUMER_KEY: SIM_CONSUMER_KEY,
        MPESA_CONSUMER_SECRET: SIM_CONSUMER_SECRET,
        MPESA_SHORTCODE: SANDBOX_SHORTCODE,
        MPESA_PASSKEY: SANDBOX_PASSKEY,
        PAYMENT_QUERY_INTERVAL_MS: '200',
        BILLING_SWEEP_INTERVAL_MS: '200',
      },
      // Longer than the test: only the plan_changed broadcast can make ingress re-verify the key.
      'ingress-api': { KEY_CACHE_TTL_MS: '300000' },
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await sim?.close();
});

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('paying for a plan by M-Pesa, across the stack', () => {
  it('a lapsed Live key is refused, then works once the payment succeeds', async () => {
    const auth = `https://127.0.0.1:${stack.ports.auth}`;
    const email = `pay-${randomUUID()}@test.herald`;
    const password = randomUUID();
    const signup = await request('POST', `${auth}/v1/accounts`, stack.ca, { email, password });
    expect(signup.status).toBe(201);
    const account = signup.body.id as string;
    const login = await request('POST', `${auth}/v1/sessions`, stack.ca, { email, password });
    const session = {
      cookie: String(login.headers['set-cookie'] ?? '').split(';')[0] ?? '',
      'x-herald-csrf': login.body.csrf as string,
    };

    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    await stack.admin([
      'account',
      'set-plan',
      '--account',
      account,
      '--plan',
      'hobby',
      '--until',
      tomorrow,
      '--json',
    ]);
    const key = await request('POST', `${auth}/v1/keys`, stack.ca, { client: 'mobile' }, session);
    expect(key.status).toBe(201);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString();
    await stack.admin([
      'account',
      'set-plan',
      '--account',
      account,
      '--plan',
      'hobby',
      '--until',
      yesterday,
      '--json',
    ]);

    const event = {
      recipient: randomUUID(),
      payload: { n: 1 },
      api_key: key.body.key,
      client: 'mobile',
    };
    const lapsed = await until(
      () => post(stack.baseUrl, stack.ca, event),
      (r) => r.status === 403,
      'the lapsed key to be refused',
    );
    expect(lapsed.body.error.code).toBe('plan_inactive');

    const checkout = await request(
      'POST',
      `${auth}/v1/billing/checkout`,
      stack.ca,
      { plan: 'hobby', phone: '0708374149' },
      session,
    );
    expect(checkout.status).toBe(201);
    expect(checkout.body.status).toBe('pending');
    await sim.settle(checkout.body.provider_ref);

    const paid = await until(
      () =>
        request(
          'GET',
          `${auth}/v1/billing/payments/${checkout.body.id}`,
          stack.ca,
          undefined,
          session,
        ),
      (r) => r.body.status !== 'pending',
      'the payment to settle',
    );
    expect(paid.body).toMatchObject({ status: 'succeeded', phone: '2547****4149' });
    expect(paid.body.history.map((e: { action: string }) => e.action)).toContain(
      'subscription_extended',
    );
    expect(Date.parse(paid.body.period_end)).toBeGreaterThan(Date.now() + 27 * 86_400_000);

    const works = await until(
      () => post(stack.baseUrl, stack.ca, event),
      (r) => r.status !== 403,
      'the key to work again',
    );
    expect(works.status).toBe(202);
    expect(sim.push(checkout.body.provider_ref)?.phone).toBe(TEST_PHONES.succeeds);
  });
});

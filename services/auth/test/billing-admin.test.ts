import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PHONES } from '../../../lib/payments/src/simulator/index.js';
import { BillingFixture, billingEnv } from './billing-fixture.js';
import { TEST_CATALOGUE } from './catalogue.js';
import { inProcessAdmin, writeCatalogue } from './cli.js';
import { natsOf } from './servers.js';

// The admin CLI starts a payment against the same simulator; the running auth service (the
// fixture) receives the callback, as in production.
const f = new BillingFixture();
let env: Record<string, string>;

beforeAll(async () => {
  await f.start();
  env = {
    DATABASE_URL: f.servers.pg.url,
    ...natsOf(f.servers).env('auth'),
    PLANS_FILE: writeCatalogue(TEST_CATALOGUE),
    USER: 'support-ann',
    ...billingEnv(f.sim, `https://localhost:${f.port}`),
  };
});
afterAll(() => f.stop());

describe('admin billing commands', () => {
  it('checkout prints the pending payment; show prints its state and history once settled', async () => {
    const user = await f.newUser();
    const out = await inProcessAdmin(
      [
        'billing',
        'checkout',
        '--account',
        user.accountId,
        '--plan',
        'hobby',
        '--phone',
        '+254 708 374 149',
        '--json',
      ],
      env,
    );
    expect(out.stderr).toBe('');
    expect(out.status).toBe(0);
    const payment = JSON.parse(out.stdout);
    expect(payment).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'pending',
      plan: 'hobby',
      account_id: user.accountId,
      created_by: 'admin:support-ann',
    });
    await f.sim.settle(payment.provider_ref);

    const shown = await inProcessAdmin(['billing', 'show', '--payment', payment.id, '--json'], env);
    expect(shown.status).toBe(0);
    const state = JSON.parse(shown.stdout);
    expect(state).toMatchObject({
      id: payment.id,
      status: 'succeeded',
      receipt: expect.any(String),
    });
    expect(state.history.map((e: { action: string }) => e.action)).toEqual([
      'created',
      'initiated',
      'callback',
      'query',
      'succeeded',
      'subscription_extended',
    ]);
    expect(state.history[0].actor).toBe('admin:support-ann');

    const text = await inProcessAdmin(['billing', 'show', '--payment', payment.id], env);
    expect(text.stdout).toContain(`Payment ${payment.id} (hobby plan, KES 1200`);
    expect(text.stdout).toContain('is succeeded; receipt ');
    expect(text.stdout).toMatch(/History:\n {2}\S+ {2}created/);
  });

  it('names the flag at fault: a bad phone, a free plan, an unknown payment, a missing flag', async () => {
    const user = await f.newUser();
    const phone = await inProcessAdmin(
      ['billing', 'checkout', '--account', user.accountId, '--plan', 'hobby', '--phone', '12345'],
      env,
    );
    expect(phone.status).toBe(2);
    expect(phone.stderr).toMatch(/^admin: --phone: "12345" is not a phone number/);
    const plan = await inProcessAdmin(
      [
        'billing',
        'checkout',
        '--account',
        user.accountId,
        '--plan',
        'free',
        '--phone',
        TEST_PHONES.succeeds,
      ],
      env,
    );
    expect(plan.status).toBe(2);
    expect(plan.stderr).toMatch(/^admin: --plan: plan "free" cannot be bought/);
    const unknown = await inProcessAdmin(
      ['billing', 'show', '--payment', crypto.randomUUID()],
      env,
    );
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^admin: --payment: payment .* does not exist/);
    const missing = await inProcessAdmin(['billing', 'checkout', '--account', user.accountId], env);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/--plan is required/);
  });

  it('says how to enable payments when they are off', async () => {
    const user = await f.newUser();
    const off = await inProcessAdmin(
      [
        'billing',
        'checkout',
        '--account',
        user.accountId,
        '--plan',
        'hobby',
        '--phone',
        TEST_PHONES.succeeds,
      ],
      { ...env, BILLING_PROVIDER: 'none' },
    );
    expect(off.status).toBe(1);
    expect(off.stderr).toMatch(/payments are not enabled: set BILLING_PROVIDER=mpesa/);
  });
});

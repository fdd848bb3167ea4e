import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callbackBody, TEST_PHONES } from '../../../lib/payments/src/simulator/index.js';
import { addOneMonth } from '../src/billing/period.js';
import { insertPayment } from '../src/billing/store.js';
import { setSubscription } from '../src/subscriptions.js';
import {
  BillingFixture,
  type Login,
  PAYMENT_TIMEOUT_MS,
  QUERY_INTERVAL_MS,
  REMINDER_MS,
} from './billing-fixture.js';
import { TEST_CATALOGUE } from './catalogue.js';

const f = new BillingFixture();
const DAY = 24 * 3600_000;
const hobby = TEST_CATALOGUE.plans.find((p) => p.id === 'hobby');
if (!hobby) throw new Error('the test catalogue has a hobby plan');

beforeAll(() => f.start());
afterAll(() => f.stop());

async function checkout(user: Login, phone: string, plan = 'hobby') {
  const res = await f.call('POST', '/v1/billing/checkout', {
    headers: f.as(user),
    body: { plan, phone },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; provider_ref: string; status: string };
}

async function payment(user: Login, id: string) {
  const res = await f.call('GET', `/v1/billing/payments/${id}`, { headers: f.as(user) });
  expect(res.status).toBe(200);
  return res.body;
}

async function subscription(accountId: string) {
  return f.db
    .selectFrom('subscriptions')
    .selectAll()
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
}

async function eventCount(id: string): Promise<number> {
  const rows = await f.db
    .selectFrom('payment_events')
    .select('id')
    .where('payment_id', '=', id)
    .execute();
  return rows.length;
}

/** A counter's value from auth's /metrics. */
async function metric(line: string): Promise<number> {
  const res = await f.call('GET', '/metrics');
  const found = String(res.body)
    .split('\n')
    .find((l) => l.startsWith(`${line} `));
  return Number(found?.split(' ')[1] ?? Number.NaN);
}

function actions(p: { history: { action: string }[] }): string[] {
  return p.history.map((e) => e.action);
}

describe('checkout to success', () => {
  it('sends the prompt, confirms the callback by query, extends by a month, and Live keys work at once', async () => {
    const user = await f.newUser();
    const refused = await f.call('POST', '/v1/keys', {
      headers: f.as(user),
      body: { client: 'mobile' },
    });
    expect(refused.status).toBe(403);

    const started = await checkout(user, '0708 374 149');
    expect(started).toMatchObject({
      status: 'pending',
      plan: 'hobby',
      phone: '2547****4149',
      amount: { currency: 'KES', minor: hobby.price.kes * 100, major: hobby.price.kes },
      created_by: `account:${user.accountId}`,
    });
    const push = f.sim.push(started.provider_ref);
    expect(push).toMatchObject({ amount: hobby.price.kes, phone: TEST_PHONES.succeeds });
    // The callback URL carries the payment and a long random token, never guessable.
    expect(push?.callbackUrl).toMatch(
      new RegExp(`^https://localhost:${f.port}/v1/billing/callbacks/${started.id}/[\\w-]{43}$`),
    );
    await f.waitFor(
      () => f.notices.some((n) => n.type === 'payment' && n.payment_id === started.id),
      'the pending notice',
    );
    expect(f.notices.filter((n) => n.type === 'payment' && n.payment_id === started.id)).toEqual([
      expect.objectContaining({ status: 'pending', plan: 'hobby', reason: null, period_end: null }),
    ]);

    await f.sim.settle(started.provider_ref);
    expect(push?.deliveries).toEqual([{ status: 200 }]);
    const done = await payment(user, started.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      receipt: push?.receipt,
      result_code: '0',
      reason: null,
    });
    expect(actions(done)).toEqual([
      'created',
      'initiated',
      'callback',
      'query',
      'succeeded',
      'subscription_extended',
    ]);
    expect(done.history[0].actor).toBe(`account:${user.accountId}`);
    expect(done.history[4]).toMatchObject({ actor: 'provider:callback', receipt: push?.receipt });

    const sub = await subscription(user.accountId);
    expect(sub.plan).toBe('hobby');
    expect(sub.period_end?.toISOString()).toBe(addOneMonth(new Date(f.clock)).toISOString());
    expect(done.period_end).toBe(sub.period_end?.toISOString());
    await f.waitFor(
      () =>
        f.invalidations.some(
          (m) =>
            JSON.stringify(m) ===
            JSON.stringify({ v: 1, account_id: user.accountId, reason: 'plan_changed' }),
        ),
      'the plan_changed broadcast',
    );
    await f.waitFor(
      () =>
        f.notices.some(
          (n) => n.type === 'payment' && n.payment_id === started.id && n.status === 'succeeded',
        ),
      'the success notice',
    );

    const live = await f.call('POST', '/v1/keys', {
      headers: f.as(user),
      body: { client: 'mobile' },
    });
    expect(live.status).toBe(201);
    expect(live.body.kind).toBe('live');
  });
});

describe('every outcome of a test number', () => {
  it.each([
    [TEST_PHONES.cancelled, 'cancelled', '1032', /cancelled on the phone/],
    [TEST_PHONES.timesOut, 'timed_out', '1037', /could not be reached/],
    [TEST_PHONES.insufficientFunds, 'failed', '1', /balance is too low/],
    [TEST_PHONES.wrongPin, 'failed', '2001', /PIN entered was wrong/],
  ])(
    '%s ends %s (%s), says why, and leaves the plan unchanged',
    async (phone, status, code, reason) => {
      const user = await f.newUser();
      const started = await checkout(user, phone);
      await f.sim.settle(started.provider_ref);
      const done = await payment(user, started.id);
      expect(done).toMatchObject({ status, result_code: code, receipt: null, period_end: null });
      expect(done.reason).toMatch(reason);
      expect((await subscription(user.accountId)).plan).toBe('free');
      await f.waitFor(
        () =>
          f.notices.some(
            (n) => n.type === 'payment' && n.payment_id === started.id && n.status === status,
          ),
        'the outcome notice',
      );
    },
  );
});

describe('callbacks change a payment exactly once', () => {
  it('duplicate callbacks, and one more after that, settle and extend once', async () => {
    const user = await f.newUser();
    f.sim.nextPush({ callback: 'duplicate' });
    const started = await checkout(user, TEST_PHONES.succeeds);
    await f.sim.settle(started.provider_ref);
    await f.sim.sendCallback(started.provider_ref);
    expect(f.sim.push(started.provider_ref)?.deliveries).toEqual([
      { status: 200 },
      { status: 200 },
      { status: 200 },
    ]);
    const done = await payment(user, started.id);
    expect(done.status).toBe('succeeded');
    expect(actions(done).filter((a) => a === 'succeeded')).toHaveLength(1);
    expect(actions(done).filter((a) => a === 'subscription_extended')).toHaveLength(1);
    expect(actions(done).filter((a) => a === 'callback')).toHaveLength(3);
    const sub = await subscription(user.accountId);
    expect(sub.period_end?.toISOString()).toBe(addOneMonth(new Date(f.clock)).toISOString());
  });

  it('a callback after the query already settled it (late, out of order) changes nothing', async () => {
    const user = await f.newUser();
    // Held back by the test rather than by the simulator's timer, so the order is certain.
    f.sim.nextPush({ callback: 'missing' });
    const started = await checkout(user, TEST_PHONES.cancelled);
    await f.sim.settle(started.provider_ref);
    f.clock += QUERY_INTERVAL_MS;
    await f.service.billing?.sweep();
    const settled = await payment(user, started.id);
    expect(settled.status).toBe('cancelled');
    await f.sim.sendCallback(started.provider_ref);
    expect(f.sim.push(started.provider_ref)?.deliveries).toEqual([{ status: 200 }]);
    const after = await payment(user, started.id);
    expect(after).toMatchObject({ status: 'cancelled', settled_at: settled.settled_at });
    expect(actions(after)).toEqual(['created', 'initiated', 'query', 'cancelled', 'callback']);
  });

  it('a forged success after a cancellation does not move the payment or the plan', async () => {
    const user = await f.newUser();
    const started = await checkout(user, TEST_PHONES.cancelled);
    await f.sim.settle(started.provider_ref);
    const push = f.sim.push(started.provider_ref);
    if (!push) throw new Error('push');
    const forged = callbackBody({ ...push, resultCode: '0', receipt: 'FORGED0001' });
    const res = await f.call('POST', new URL(push.callbackUrl).pathname, { body: forged });
    expect(res.status).toBe(200);
    expect((await payment(user, started.id)).status).toBe('cancelled');
    expect((await subscription(user.accountId)).plan).toBe('free');
  });
});

describe('callbacks are never trusted alone', () => {
  it('a wrong or missing token is refused with 404 and changes nothing', async () => {
    const user = await f.newUser();
    f.sim.nextPush({ callback: 'missing' });
    const started = await checkout(user, TEST_PHONES.succeeds);
    await f.sim.settle(started.provider_ref);
    const push = f.sim.push(started.provider_ref);
    if (!push) throw new Error('push');
    const body = callbackBody(push);
    const path = new URL(push.callbackUrl).pathname;
    const token = path.split('/').pop() ?? '';
    const before = await eventCount(started.id);
    const refusedBefore = await metric('herald_auth_payment_callbacks_refused_total');
    const wrongToken = path.replace(
      token,
      `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`,
    );
    for (const p of [
      wrongToken,
      `/v1/billing/callbacks/${started.id}/`,
      `/v1/billing/callbacks/${started.id}`,
      `/v1/billing/callbacks/${crypto.randomUUID()}/${token}`,
      `/v1/billing/callbacks/not-a-uuid/${token}`,
    ]) {
      const res = await f.call('POST', p, { body });
      expect(res.status, p).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect(await eventCount(started.id)).toBe(before);
    // Counted where the callback route answered; a path the router does not match is its 404.
    expect(await metric('herald_auth_payment_callbacks_refused_total')).toBe(refusedBefore + 4);
    expect((await payment(user, started.id)).status).toBe('pending');
    expect((await subscription(user.accountId)).plan).toBe('free');
  });

  it('a success whose amount disagrees with the payment does not upgrade', async () => {
    const user = await f.newUser();
    f.sim.nextPush({ callbackAmount: 1 });
    const started = await checkout(user, TEST_PHONES.succeeds);
    await f.sim.settle(started.provider_ref);
    const done = await payment(user, started.id);
    expect(done.status).toBe('failed');
    expect(done.reason).toMatch(/does not match this payment/);
    expect(done.history.at(-1).detail).toMatch(/amount 1 \(expected 1200\)/);
    expect((await subscription(user.accountId)).plan).toBe('free');
  });

  it('a success the query contradicts does not upgrade: the query decides', async () => {
    const user = await f.newUser();
    f.sim.nextPush({ callback: 'missing', resultCode: '1032' });
    const started = await checkout(user, TEST_PHONES.succeeds);
    await f.sim.settle(started.provider_ref);
    const push = f.sim.push(started.provider_ref);
    if (!push) throw new Error('push');
    const claimsSuccess = callbackBody({ ...push, resultCode: '0', receipt: 'FAKE000001' });
    const res = await f.call('POST', new URL(push.callbackUrl).pathname, { body: claimsSuccess });
    expect(res.status).toBe(200);
    const done = await payment(user, started.id);
    expect(done.status).toBe('cancelled');
    expect(done.receipt).toBeNull();
    expect(done.history.at(-1).detail).toMatch(/callback said succeeded .* query says cancelled/);
    expect((await subscription(user.accountId)).plan).toBe('free');
  });

  it('a body that is not a callback is refused and leaves the payment pending', async () => {
    const user = await f.newUser();
    f.sim.nextPush({ callback: 'missing' });
    const started = await checkout(user, TEST_PHONES.succeeds);
    const push = f.sim.push(started.provider_ref);
    const res = await f.call('POST', new URL(push?.callbackUrl ?? '').pathname, {
      body: { hello: 1 },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_field', field: 'body' });
    expect((await payment(user, started.id)).status).toBe('pending');
  });
});

describe('the schedule', () => {
  it('resolves a payment with no callback by query, after "being processed" answers', async () => {
    const user = await f.newUser();
    f.sim.nextPush({ callback: 'missing' });
    const started = await checkout(user, TEST_PHONES.succeeds);
    f.clock += QUERY_INTERVAL_MS;
    await f.service.billing?.sweep();
    const still = await payment(user, started.id);
    expect(still.status).toBe('pending');
    expect(still.history.at(-1)).toMatchObject({
      action: 'query',
      detail: 'The transaction is being processed',
    });
    await f.sim.settle(started.provider_ref);
    f.clock += QUERY_INTERVAL_MS;
    await f.service.billing?.sweep();
    const done = await payment(user, started.id);
    expect(done.status).toBe('succeeded');
    expect(done.history.at(-2)).toMatchObject({ action: 'succeeded', actor: 'provider:query' });
    expect((await subscription(user.accountId)).plan).toBe('hobby');
  });

  it('does not query before the interval, and times out a payment nobody answers', async () => {
    const user = await f.newUser();
    const started = await checkout(user, TEST_PHONES.succeeds);
    const events = await eventCount(started.id);
    await f.service.billing?.sweep();
    expect(await eventCount(started.id)).toBe(events);
    f.clock += PAYMENT_TIMEOUT_MS;
    await f.service.billing?.sweep();
    const done = await payment(user, started.id);
    expect(done).toMatchObject({ status: 'timed_out', result_code: null });
    expect(done.reason).toMatch(/no answer in time/);
    expect(actions(done).slice(-2)).toEqual(['query', 'timed_out']);
    // A result that comes after the timeout changes nothing.
    await f.sim.settle(started.provider_ref);
    expect((await payment(user, started.id)).status).toBe('timed_out');
    expect((await subscription(user.accountId)).plan).toBe('free');
  });
});

describe('under concurrency and failure', () => {
  it('a callback and two sweeps racing settle and extend once', async () => {
    const user = await f.newUser();
    f.sim.nextPush({ callback: 'missing' });
    const started = await checkout(user, TEST_PHONES.succeeds);
    await f.sim.settle(started.provider_ref);
    f.clock += QUERY_INTERVAL_MS;
    const billing = f.service.billing;
    if (!billing) throw new Error('billing is on in this fixture');
    await Promise.all([f.sim.sendCallback(started.provider_ref), billing.sweep(), billing.sweep()]);
    const done = await payment(user, started.id);
    expect(done.status).toBe('succeeded');
    expect(actions(done).filter((a) => a === 'succeeded')).toHaveLength(1);
    expect(actions(done).filter((a) => a === 'subscription_extended')).toHaveLength(1);
    const sub = await subscription(user.accountId);
    expect(sub.period_end?.toISOString()).toBe(addOneMonth(new Date(f.clock)).toISOString());
  });

  it('a push M-Pesa refuses answers 503 and leaves a failed payment, not a pending one', async () => {
    const user = await f.newUser();
    f.sim.nextPush({
      refuse: { status: 500, errorCode: '500.003.02', errorMessage: 'System is busy' },
    });
    const res = await f.call('POST', '/v1/billing/checkout', {
      headers: f.as(user),
      body: { plan: 'hobby', phone: TEST_PHONES.succeeds },
    });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('unavailable');
    const list = await f.call('GET', '/v1/billing/payments', { headers: f.as(user) });
    expect(list.body.payments).toMatchObject([{ status: 'failed', provider_ref: null }]);
    const failed = await payment(user, list.body.payments[0].id);
    expect(failed.history.at(-1)).toMatchObject({
      actor: 'provider:initiate',
      detail: expect.stringContaining('System is busy'),
    });
    // The account may try again at once.
    await checkout(user, TEST_PHONES.cancelled);
  });

  it('times out a payment whose push never completed (no provider reference)', async () => {
    const user = await f.newUser();
    const now = new Date(f.clock);
    const row = await insertPayment(f.db, {
      account_id: user.accountId,
      plan: 'hobby',
      provider: 'mpesa',
      currency: 'KES',
      amount_minor: 120_000,
      phone: TEST_PHONES.succeeds,
      callback_token_hash: 'x'.repeat(64),
      created_by: 'test',
      created_at: now,
      expires_at: new Date(f.clock + PAYMENT_TIMEOUT_MS),
      next_query_at: now,
    });
    await f.service.billing?.sweep();
    expect((await payment(user, row.id)).status).toBe('pending');
    f.clock += PAYMENT_TIMEOUT_MS;
    await f.service.billing?.sweep();
    const done = await payment(user, row.id);
    expect(done.status).toBe('timed_out');
    expect(done.history.at(-1).detail).toBe('no provider reference by the deadline');
  });
});

describe('one payment at a time, and clear refusals', () => {
  it('refuses a second checkout while one is pending, a bad phone and a free plan', async () => {
    const user = await f.newUser();
    const started = await checkout(user, TEST_PHONES.succeeds);
    const again = await f.call('POST', '/v1/billing/checkout', {
      headers: f.as(user),
      body: { plan: 'startup', phone: TEST_PHONES.succeeds },
    });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('payment_in_progress');
    expect(again.body.error.message).toContain(started.id);
    await f.sim.settle(started.provider_ref);

    const phone = await f.call('POST', '/v1/billing/checkout', {
      headers: f.as(user),
      body: { plan: 'hobby', phone: '0812' },
    });
    expect(phone.status).toBe(400);
    expect(phone.body.error).toMatchObject({ code: 'invalid_field', field: 'phone' });
    expect(phone.body.error.message).toContain('07XXXXXXXX');
    const free = await f.call('POST', '/v1/billing/checkout', {
      headers: f.as(user),
      body: { plan: 'free', phone: TEST_PHONES.succeeds },
    });
    expect(free.status).toBe(400);
    expect(free.body.error).toMatchObject({ code: 'invalid_field', field: 'plan' });
    const noCsrf = await f.call('POST', '/v1/billing/checkout', {
      headers: { cookie: user.cookie },
      body: { plan: 'hobby', phone: TEST_PHONES.succeeds },
    });
    expect(noCsrf.status).toBe(403);
  });

  it("lists an account's payments newest first and hides other accounts' payments", async () => {
    const user = await f.newUser();
    const other = await f.newUser();
    const started = await checkout(user, TEST_PHONES.cancelled);
    await f.sim.settle(started.provider_ref);
    const list = await f.call('GET', '/v1/billing/payments', { headers: f.as(user) });
    expect(list.body.payments.map((p: { id: string }) => p.id)).toEqual([started.id]);
    expect(JSON.stringify(list.body)).not.toContain('callback_token');
    const theirs = await f.call('GET', `/v1/billing/payments/${started.id}`, {
      headers: f.as(other),
    });
    expect(theirs.status).toBe(404);
    expect(
      (await f.call('GET', '/v1/billing/payments', { headers: f.as(other) })).body.payments,
    ).toEqual([]);
  });
});

describe('renewal and lapse', () => {
  it('renewing early extends from the current period end, not from today', async () => {
    const user = await f.newUser();
    const end = new Date(f.clock + 10 * DAY);
    await setSubscription(f.db, user.accountId, { plan: hobby, period_end: end });
    const started = await checkout(user, TEST_PHONES.succeeds);
    await f.sim.settle(started.provider_ref);
    const sub = await subscription(user.accountId);
    expect(sub.period_end?.toISOString()).toBe(addOneMonth(end).toISOString());
  });

  it.each([
    ['hobby', 'startup'],
    ['startup', 'hobby'],
  ])(
    'paying for %s → %s mid-period starts the new plan now and converts the unused days at the price ratio',
    async (fromId, toId) => {
      const from = TEST_CATALOGUE.plans.find((p) => p.id === fromId);
      const to = TEST_CATALOGUE.plans.find((p) => p.id === toId);
      if (!from || !to) throw new Error('the test catalogue has hobby and startup plans');
      const user = await f.newUser();
      const end = new Date(f.clock + 29 * DAY);
      await setSubscription(f.db, user.accountId, { plan: from, period_end: end });
      const started = await checkout(user, TEST_PHONES.succeeds, toId);
      await f.sim.settle(started.provider_ref);
      await f.waitFor(
        async () => (await payment(user, started.id)).status === 'succeeded',
        'the payment settled',
      );
      const sub = await subscription(user.accountId);
      expect(sub.plan).toBe(toId);
      const credit = Math.floor((29 * DAY * from.price.kes) / to.price.kes);
      expect(sub.period_end?.getTime()).toBe(addOneMonth(new Date(f.clock)).getTime() + credit);
    },
  );

  it('after a lapse, a payment starts a new month from now', async () => {
    const user = await f.newUser();
    await setSubscription(f.db, user.accountId, {
      plan: hobby,
      period_end: new Date(f.clock - 5 * DAY),
    });
    const started = await checkout(user, TEST_PHONES.succeeds);
    await f.sim.settle(started.provider_ref);
    const sub = await subscription(user.accountId);
    expect(sub.period_end?.toISOString()).toBe(addOneMonth(new Date(f.clock)).toISOString());
  });

  it('reminds once before the period ends (event and API field), then the plan lapses', async () => {
    const user = await f.newUser();
    const end = new Date(f.clock + REMINDER_MS + DAY);
    await setSubscription(f.db, user.accountId, { plan: hobby, period_end: end });
    const key = await f.call('POST', '/v1/keys', {
      headers: f.as(user),
      body: { client: 'mobile' },
    });
    expect(key.status).toBe(201);

    await f.service.billing?.sweep();
    const early = await f.call('GET', '/v1/billing/subscription', { headers: f.as(user) });
    expect(early.body.renewal).toMatchObject({ reminder_due: false, lapsed: false });
    expect(
      f.notices.some((n) => n.type === 'renewal_reminder' && n.account_id === user.accountId),
    ).toBe(false);

    f.clock += 2 * DAY;
    await f.service.billing?.sweep();
    await f.service.billing?.sweep();
    await f.waitFor(
      () => f.notices.some((n) => n.type === 'renewal_reminder' && n.account_id === user.accountId),
      'the renewal reminder',
    );
    const due = await f.call('GET', '/v1/billing/subscription', { headers: f.as(user) });
    expect(due.body).toMatchObject({
      plan: 'hobby',
      paid: true,
      payments_enabled: true,
      renewal: { period_end: end.toISOString(), reminder_due: true, lapsed: false },
    });
    const reminders = await f.db
      .selectFrom('renewal_reminders')
      .selectAll()
      .where('account_id', '=', user.accountId)
      .execute();
    expect(reminders).toHaveLength(1);

    f.clock = end.getTime() + 1000;
    const lapsed = await f.call('GET', '/v1/account', { headers: f.as(user) });
    expect(lapsed.body.status).toBe('lapsed');
    const after = await f.call('GET', '/v1/billing/subscription', { headers: f.as(user) });
    expect(after.body.renewal).toMatchObject({ reminder_due: false, lapsed: true });
    const refused = await f.call('POST', '/v1/keys', {
      headers: f.as(user),
      body: { client: 'mobile' },
    });
    expect(refused.status).toBe(403);
    expect(
      f.notices.filter((n) => n.type === 'renewal_reminder' && n.account_id === user.accountId),
    ).toHaveLength(1);
  });
});

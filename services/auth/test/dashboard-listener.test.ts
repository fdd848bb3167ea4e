import { hashKey } from '@herald/access';
import {
  AuthVerifyReply,
  dashboardRecipient,
  NotifyRequest,
  PaymentNotice,
  subjects,
} from '@herald/proto';
import { JSONCodec, type Msg } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createResetToken } from '../src/password-resets.js';
import { BillingFixture, DASHBOARD, type Login } from './billing-fixture.js';

/**
 * The dashboard's own Herald credential and the billing notices auth dispatches to it, against a
 * real Postgres, nats-server and the Daraja simulator. Ingress is not part of auth's tests: a
 * subscriber on `rt.dispatch.*` stands where ingress stands and answers as it does, after
 * checking the dispatched key with auth itself over `rt.auth.verify`.
 */
const f = new BillingFixture();
const TTL_MS = 120_000;
const MAX_CONNECTIONS = 3;
const WS_URL = 'wss://edge.example.com';
const codec = JSONCodec();

interface Dispatched {
  subject: string;
  body: NotifyRequest;
  idempotencyKey: string | undefined;
}
const dispatched: Dispatched[] = [];

beforeAll(async () => {
  await f.start({
    DASHBOARD_WS_URL: WS_URL,
    DASHBOARD_KEY_TTL_MS: String(TTL_MS),
    DASHBOARD_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
  });
  f.listener.subscribe(subjects.dispatchAll, {
    callback: (_err, msg: Msg) => {
      dispatched.push({
        subject: msg.subject,
        body: NotifyRequest.parse(codec.decode(msg.data)),
        idempotencyKey: msg.headers?.get('Idempotency-Key'),
      });
      msg.respond(
        codec.encode({ status: 'sent', id: `evt-${dispatched.length}`, http_status: 200 }),
      );
    },
  });
  await f.listener.flush();
});
afterAll(() => f.stop());

async function verify(key: string): Promise<AuthVerifyReply> {
  const msg = await f.listener.request(
    subjects.authVerify,
    codec.encode({ v: 1, key_hash: hashKey(key) }),
    { timeout: 5000 },
  );
  return AuthVerifyReply.parse(codec.decode(msg.data));
}

async function mint(user: Login) {
  const res = await f.call('POST', '/v1/dashboard/listener', { headers: f.as(user) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as {
    api_key: string;
    recipient: string;
    client: string;
    ws_url: string;
    expires_at: string;
  };
}

describe('POST /v1/dashboard/listener', () => {
  it('mints a credential for the account dashboard recipient that auth verifies as a listener', async () => {
    const user = await f.newUser();
    const listener = await mint(user);
    expect(listener.api_key).toMatch(/^hk_dash_[0-9A-Za-z]{43}$/);
    expect(listener).toMatchObject({
      recipient: dashboardRecipient(user.accountId),
      client: 'web',
      ws_url: WS_URL,
      expires_at: new Date(f.clock + TTL_MS).toISOString(),
    });
    const reply = await verify(listener.api_key);
    if (!reply.ok) throw new Error(reply.error.message);
    expect(reply.key).toMatchObject({
      account_id: user.accountId,
      kind: 'dashboard',
      client: 'web',
      // Minted from the dashboard's Origin: the socket must come from it.
      domain: DASHBOARD,
      dashboard: { role: 'listen', recipient: dashboardRecipient(user.accountId) },
      expires_at: f.clock + TTL_MS,
    });
    // Its own pool at the edge, capped by DASHBOARD_MAX_CONNECTIONS, never the plan's cap.
    expect(reply.key.limits.connections).toBe(MAX_CONNECTIONS);
    // Not one of the customer's keys: never listed.
    const keys = await f.call('GET', '/v1/keys', { headers: f.as(user) });
    expect(keys.status).toBe(200);
    expect(JSON.stringify(keys.body)).not.toContain(reply.key.id);
    // Only hashes are stored.
    const rows = await f.db.selectFrom('dashboard_keys').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(listener.api_key);
  });

  it('needs a session and its CSRF token', async () => {
    const user = await f.newUser();
    const anonymous = await f.call('POST', '/v1/dashboard/listener', {
      headers: { origin: DASHBOARD },
    });
    expect(anonymous.status).toBe(401);
    const noCsrf = await f.call('POST', '/v1/dashboard/listener', {
      headers: { cookie: user.cookie, origin: DASHBOARD },
    });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.error.code).toBe('csrf_failed');
  });

  it('expires after DASHBOARD_KEY_TTL_MS', async () => {
    const user = await f.newUser();
    const listener = await mint(user);
    const start = f.clock;
    try {
      f.clock = start + TTL_MS - 1;
      expect((await verify(listener.api_key)).ok).toBe(true);
      f.clock = start + TTL_MS;
      const reply = await verify(listener.api_key);
      expect(reply).toMatchObject({ ok: false, error: { code: 'key_expired' } });
    } finally {
      f.clock = start;
    }
  });

  it('ends with the login: logout deletes it and broadcasts its revocation', async () => {
    const user = await f.newUser();
    const listener = await mint(user);
    const ok = await verify(listener.api_key);
    if (!ok.ok) throw new Error(ok.error.message);
    const out = await f.call('DELETE', '/v1/sessions/current', { headers: f.as(user) });
    expect(out.status).toBe(204);
    expect(await verify(listener.api_key)).toMatchObject({
      ok: false,
      error: { code: 'invalid_api_key' },
    });
    await f.waitFor(
      () =>
        f.invalidations.some(
          (m) =>
            JSON.stringify(m) ===
            JSON.stringify({
              v: 1,
              key_id: ok.key.id,
              account_id: user.accountId,
              reason: 'revoked',
            }),
        ),
      'the listener revocation',
    );
  });

  it("ends with a password reset: every login's listener is deleted and its revocation broadcast", async () => {
    const user = await f.newUser();
    const second = await f.login(user.email);
    const listeners = [await mint(user), await mint(second)];
    const ids: string[] = [];
    for (const l of listeners) {
      const ok = await verify(l.api_key);
      if (!ok.ok) throw new Error(ok.error.message);
      ids.push(ok.key.id);
    }
    const { token } = await createResetToken(f.db, user.email, f.clock);
    const reset = await f.call('POST', '/v1/password-resets', {
      body: { token, password: 'another-long-password-42' },
    });
    expect(reset.status, JSON.stringify(reset.body)).toBe(204);
    for (const l of listeners) {
      expect(await verify(l.api_key)).toMatchObject({
        ok: false,
        error: { code: 'invalid_api_key' },
      });
    }
    const revoked = (id: string) =>
      f.invalidations.some(
        (m) =>
          JSON.stringify(m) ===
          JSON.stringify({ v: 1, key_id: id, account_id: user.accountId, reason: 'revoked' }),
      );
    await f.waitFor(() => ids.every(revoked), "both logins' listener revocations");
  });
});

describe('billing notices over Herald', () => {
  it("dispatches each payment step on the account's dispatch subject to its dashboard recipient, with a sender credential", async () => {
    const a = await f.newUser();
    const b = await f.newUser();
    const started = await f.call('POST', '/v1/billing/checkout', {
      headers: f.as(a),
      body: { plan: 'hobby', phone: '0708 374 149' },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const other = await f.call('POST', '/v1/billing/checkout', {
      headers: f.as(b),
      body: { plan: 'hobby', phone: '0700 000 032' },
    });
    expect(other.status, JSON.stringify(other.body)).toBe(201);
    await f.sim.settle(started.body.provider_ref);
    await f.sim.settle(other.body.provider_ref);

    const stepsOf = (account: string, payment: string) =>
      dispatched.filter(
        (d) =>
          d.subject === subjects.dispatch(account) &&
          (d.body.payload as PaymentNotice).payment_id === payment,
      );
    await f.waitFor(
      () =>
        stepsOf(a.accountId, started.body.id).length === 2 &&
        stepsOf(b.accountId, other.body.id).length === 2,
      'both payments dispatched pending then settled',
    );
    const steps = stepsOf(a.accountId, started.body.id);
    expect(steps.map((d) => PaymentNotice.parse(d.body.payload).status)).toEqual([
      'pending',
      'succeeded',
    ]);
    expect(
      stepsOf(b.accountId, other.body.id).map((d) => (d.body.payload as PaymentNotice).status),
    ).toEqual(['pending', 'cancelled']);
    for (const d of steps) {
      expect(d.body).toMatchObject({
        recipient: dashboardRecipient(a.accountId),
        client: 'mobile',
        payload: { account_id: a.accountId, type: 'payment' },
      });
      // Never a phone number or a receipt in a notice.
      expect(JSON.stringify(d.body.payload)).not.toMatch(/2547|receipt|phone/);
      expect(d.idempotencyKey).toBe(
        `billing:${started.body.id}:${(d.body.payload as PaymentNotice).status}`,
      );
    }
    // Tenant isolation: nothing of account A went to B's subject or B's dashboard recipient.
    for (const d of dispatched.filter((x) => x.subject === subjects.dispatch(b.accountId))) {
      expect(d.body.recipient).toBe(dashboardRecipient(b.accountId));
      expect((d.body.payload as PaymentNotice).account_id).toBe(b.accountId);
    }
    // The sender credential is auth's own, of the same account, and may only send.
    const sender = await verify(steps[0]?.body.api_key ?? '');
    if (!sender.ok) throw new Error(sender.error.message);
    expect(sender.key).toMatchObject({
      account_id: a.accountId,
      kind: 'dashboard',
      client: 'mobile',
      domain: null,
      dashboard: { role: 'send', recipient: dashboardRecipient(a.accountId) },
    });
    // One sender per account, reused for every step while it is young.
    expect(new Set(steps.map((d) => d.body.api_key)).size).toBe(1);
    expect(steps[0]?.body.api_key).not.toBe(stepsOf(b.accountId, other.body.id)[0]?.body.api_key);
  });
});

import { readFileSync } from 'node:fs';
import { ApnsSimulator, FcmSimulator, makeCerts } from '@herald/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ask, type PushFixture, pending, startPushFixture } from './push-support.js';
import { eventually, uuid } from './support.js';

let p: PushFixture;
let fcm: FcmSimulator;
let apns: ApnsSimulator;
beforeAll(async () => {
  const certs = await makeCerts();
  fcm = await FcmSimulator.start();
  apns = await ApnsSimulator.start({
    tls: { cert: readFileSync(certs.certFile, 'utf8'), key: readFileSync(certs.keyFile, 'utf8') },
  });
  p = await startPushFixture({
    PUSH_CA_FILE: certs.caFile,
    FCM_ORIGIN: fcm.url,
    FCM_TOKEN_URI: fcm.tokenUri,
    // A production origin that answers nothing: a sandbox account must go to the sandbox one.
    APNS_ORIGIN: 'https://127.0.0.1:1',
    APNS_SANDBOX_ORIGIN: apns.url,
  });
});
afterAll(async () => {
  await p?.close();
  await fcm?.close();
  await apns?.close();
});

const token = () => uuid().replaceAll('-', '');

async function fcmDevice(account: string, recipient: string, device = `fcm-${token()}`) {
  const sa = fcm.serviceAccount('herald-test');
  const c = await ask(p.auth, { op: 'configure-fcm', account_id: account, service_account: sa });
  expect(c.ok, JSON.stringify(c)).toBe(true);
  const r = await ask(p.ingress, {
    op: 'subscribe-device',
    account_id: account,
    key_id: 'key-1',
    recipient,
    kind: 'fcm',
    token: device,
  });
  expect(r.ok, JSON.stringify(r)).toBe(true);
  return { id: r.id as string, device, sa };
}

async function apnsDevice(account: string, recipient: string, device = token()) {
  const key = apns.key();
  const apnsKey = { ...key, topic: 'com.example.app', sandbox: true };
  const c = await ask(p.auth, { op: 'configure-apns', account_id: account, apns: apnsKey });
  expect(c.ok, JSON.stringify(c)).toBe(true);
  const r = await ask(p.ingress, {
    op: 'subscribe-device',
    account_id: account,
    key_id: 'key-1',
    recipient,
    kind: 'apns',
    token: device,
  });
  expect(r.ok, JSON.stringify(r)).toBe(true);
  return { id: r.id as string, device, key };
}

const subscriptions = async (account: string) =>
  ((await ask(p.auth, { op: 'list', account_id: account })).subscriptions as unknown[]).length;

describe('FCM HTTP v1 through the simulator', () => {
  it('pushes an offline event with a verified service-account JWT to the device token, without the payload', async () => {
    const [account, recipient, id] = [uuid(), uuid(), uuid()];
    const { device, sa } = await fcmDevice(account, recipient);
    pending(p, account, recipient, id, { after_ms: 300, payload_json: '{"secret":1}' });
    await eventually(() => fcm.accepted(device).length === 1, 'the FCM push', 15_000);
    const [got] = fcm.accepted(device);
    expect(got?.project).toBe('herald-test');
    expect(got?.clientEmail).toBe(sa.client_email);
    expect(fcm.grants.some((g) => g.iss === sa.client_email && g.aud === fcm.tokenUri)).toBe(true);
    const m = got?.message as Record<string, Record<string, unknown>>;
    expect(m.notification).toEqual({ title: 'Hello' });
    expect(m.data).toMatchObject({ id, ids: id, count: '1' });
    expect(m.data?.payload).toBeUndefined();
    expect(m.android).toMatchObject({ collapse_key: m.data?.tag });
  });

  it('carries the payload only for a key with --push-include-payload', async () => {
    const [account, recipient, id] = [uuid(), uuid(), uuid()];
    const { device } = await fcmDevice(account, recipient);
    pending(p, account, recipient, id, {
      after_ms: 300,
      payload_json: '{"n":7}',
      include_payload: true,
    });
    await eventually(() => fcm.accepted(device).length === 1, 'the FCM push', 15_000);
    const data = fcm.accepted(device)[0]?.message.data as Record<string, string>;
    expect(JSON.parse(data.payload ?? '')).toEqual({ n: 7 });
  });

  it('deletes a subscription FCM reports UNREGISTERED (404)', async () => {
    const [account, recipient] = [uuid(), uuid()];
    const { device } = await fcmDevice(account, recipient);
    fcm.script(device, { status: 404, errorCode: 'UNREGISTERED' });
    pending(p, account, recipient, uuid(), { after_ms: 300 });
    await eventually(async () => (await subscriptions(account)) === 0, 'deleted', 15_000);
    expect(fcm.arrivals.filter((a) => a.token === device).map((a) => a.status)).toEqual([404]);
  });

  it('retries a 429 after its Retry-After, then succeeds once', async () => {
    const [account, recipient, id] = [uuid(), uuid(), uuid()];
    const { device } = await fcmDevice(account, recipient);
    fcm.script(device, { status: 429, errorCode: 'QUOTA_EXCEEDED', retryAfter: '1' });
    pending(p, account, recipient, id, { after_ms: 300 });
    await eventually(() => fcm.accepted(device).length === 1, 'the retried push', 20_000);
    const tries = fcm.arrivals.filter((a) => a.token === device);
    expect(tries.map((a) => a.status)).toEqual([429, 200]);
    expect((tries[1]?.at ?? 0) - (tries[0]?.at ?? 0)).toBeGreaterThanOrEqual(900);
  });
});

describe('APNs through the simulator (HTTP/2, TLS)', () => {
  it('pushes an offline event with a verified ES256 provider token to the sandbox device, without the payload', async () => {
    const [account, recipient, id] = [uuid(), uuid(), uuid()];
    const { device, key } = await apnsDevice(account, recipient);
    pending(p, account, recipient, id, { after_ms: 300, body: 'World', payload_json: '{"s":1}' });
    await eventually(() => apns.accepted(device).length === 1, 'the APNs push', 15_000);
    const got = apns.accepted(device)[0];
    expect(got).toMatchObject({
      keyId: key.key_id,
      teamId: key.team_id,
      topic: 'com.example.app',
      pushType: 'alert',
      priority: '10',
    });
    expect(got?.collapseId).toHaveLength(32);
    expect(Number(got?.expiration)).toBeGreaterThan(Date.now() / 1000);
    expect(got?.payload).toMatchObject({
      aps: { alert: { title: 'Hello', body: 'World' } },
      herald: { id, ids: [id], count: 1 },
    });
    expect((got?.payload.herald as Record<string, unknown> | undefined)?.payload).toBeUndefined();
    expect(got?.payload.herald).toBeDefined();
  });

  it.each([
    [400, 'BadDeviceToken'],
    [410, 'Unregistered'],
  ])('deletes a subscription APNs answers %i %s', async (status, reason) => {
    const [account, recipient] = [uuid(), uuid()];
    const { device } = await apnsDevice(account, recipient);
    apns.script(device, { status, reason });
    pending(p, account, recipient, uuid(), { after_ms: 300 });
    await eventually(async () => (await subscriptions(account)) === 0, 'deleted', 15_000);
  });

  it('retries a 429 after its Retry-After, then succeeds once', async () => {
    const [account, recipient] = [uuid(), uuid()];
    const { device } = await apnsDevice(account, recipient);
    apns.script(device, { status: 429, reason: 'TooManyRequests', retryAfter: '1' });
    pending(p, account, recipient, uuid(), { after_ms: 300 });
    await eventually(() => apns.accepted(device).length === 1, 'the retried push', 20_000);
    expect(apns.arrivals.filter((a) => a.token === device).map((a) => a.status)).toEqual([
      429, 200,
    ]);
  });
});

describe('credentials', () => {
  it('status shows which providers are configured and their public parts, never a private key', async () => {
    const account = uuid();
    const { sa } = await fcmDevice(account, uuid());
    const { key } = await apnsDevice(account, uuid());
    const st = await ask(p.auth, { op: 'status', account_id: account });
    expect(st.credentials).toMatchObject({
      fcm: { configured: true, project_id: 'herald-test', client_email: sa.client_email },
      apns: { configured: true, key_id: key.key_id, team_id: key.team_id, sandbox: true },
      subscriptions: 2,
    });
    expect(JSON.stringify(st)).not.toContain('PRIVATE KEY');
    const rows = await p.f.db
      .selectFrom('push_provider_credentials')
      .select('private_sealed')
      .where('account_id', '=', account)
      .execute();
    expect(rows).toHaveLength(2);
    for (const r of rows) expect(r.private_sealed).not.toContain('PRIVATE KEY');
  });

  it('test sends a test push to an FCM and an APNs device now and answers what the provider said', async () => {
    const account = uuid();
    const f = await fcmDevice(account, uuid());
    const a = await apnsDevice(account, uuid());
    for (const [sub, accepted] of [
      [f.id, () => fcm.accepted(f.device)],
      [a.id, () => apns.accepted(a.device)],
    ] as const) {
      const r = await ask(p.auth, { op: 'test', account_id: account, id: sub });
      expect(r).toMatchObject({ ok: true, http_status: 200, error: null });
      expect(accepted()).toHaveLength(1);
    }
    const tested = fcm.accepted(f.device)[0]?.message.notification as Record<string, unknown>;
    expect(tested.title).toBe('Test notification');
  });

  it('refuses a key of the wrong kind, naming the field', async () => {
    const account = uuid();
    const ec = apns.key().key_pem;
    const sa = { ...fcm.serviceAccount(), private_key: ec };
    const r = await ask(p.auth, { op: 'configure-fcm', account_id: account, service_account: sa });
    expect(r).toMatchObject({ ok: false, error: { field: 'service_account.private_key' } });
  });
});

import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApnsSimulator, FcmSimulator, makeCerts, post } from '@herald/testkit';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, recipient, type Tenant, useStack } from './fixtures.js';

/**
 * The push fallback to native apps through every service (issue 40): the admin CLI stores the
 * account's FCM service account and APNs key (status service, sealed), an app's device token is
 * posted to ingress's route with the key (`token` the DEVICE token), and an event of a
 * `--push-after-ms` key that no socket proves in time reaches the FCM and APNs simulators, which
 * verify the service-account JWT and the ES256 provider token and record the device token routed.
 */
let fcm: FcmSimulator;
let apns: ApnsSimulator;
const files = mkdtempSync(join(tmpdir(), 'herald-push-native-'));
const statusEnv: Record<string, string> = {
  WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
  // The simulators are on 127.0.0.1: allowed here as `make dev` allows it, never in production.
  PUSH_ALLOW_PRIVATE: 'true',
};
beforeAll(async () => {
  const certs = await makeCerts();
  fcm = await FcmSimulator.start();
  apns = await ApnsSimulator.start({
    tls: { cert: readFileSync(certs.certFile, 'utf8'), key: readFileSync(certs.keyFile, 'utf8') },
  });
  Object.assign(statusEnv, {
    PUSH_CA_FILE: certs.caFile,
    FCM_ORIGIN: fcm.url,
    FCM_TOKEN_URI: fcm.tokenUri,
    APNS_ORIGIN: apns.url,
  });
});
afterAll(async () => {
  await fcm?.close();
  await apns?.close();
});

const stack = useStack({
  services: ['auth', 'ingress-api', 'socket-edge', 'status'],
  env: { status: statusEnv },
});

const TEST_TIMEOUT_MS = 120_000;
/** How long a push may take on a loaded machine: its window, the status writer's batch wait, the claim. */
const WAIT_MS = 30_000;
const AFTER_MS = 400;

/** An account with FCM and APNs configured through the admin CLI, and a push key. */
async function nativeTenant(opts: { includePayload?: boolean; requireToken?: boolean } = {}) {
  const { id: account } = await stack().createAccount();
  const saFile = join(files, `${account}.json`);
  writeFileSync(saFile, JSON.stringify(fcm.serviceAccount('herald-e2e')));
  const key = apns.key();
  const p8 = join(files, `${account}.p8`);
  writeFileSync(p8, key.key_pem);
  const configured = (await stack().admin([
    'push',
    'configure',
    '--account',
    account,
    '--fcm-service-account',
    saFile,
    '--apns-key',
    p8,
    '--apns-key-id',
    key.key_id,
    '--apns-team-id',
    key.team_id,
    '--apns-topic',
    'com.example.app',
    '--json',
  ])) as { fcm: { configured: boolean }; apns: { configured: boolean } };
  expect(configured.fcm.configured && configured.apns.configured).toBe(true);
  const tenant: Tenant = {
    account,
    key: await stack().createKey({
      account,
      kind: 'test',
      push: { afterMs: AFTER_MS, ...(opts.includePayload ? { includePayload: true } : {}) },
      ...(opts.requireToken ? { requireToken: true } : {}),
    }),
  };
  return { tenant, apnsKey: key };
}

const register = (tenant: Tenant, to: string, body: Record<string, unknown>) =>
  post(
    stack().baseUrl,
    stack().ca,
    { api_key: tenant.key.key, recipient: to, client: 'mobile', ...body },
    { path: '/push/subscriptions' },
  );

const notify = (tenant: Tenant, to: string, payload: unknown) =>
  post(stack().baseUrl, stack().ca, {
    recipient: to,
    payload,
    api_key: tenant.key.key,
    client: 'mobile',
    push: { title: 'Order shipped' },
  });

const deviceToken = () => randomBytes(32).toString('hex');

describe('push fallback to FCM and APNs through the whole stack', () => {
  it(
    'pushes an offline event to the FCM and the APNs device of a recipient, JWTs verified, without the payload',
    async () => {
      const { tenant, apnsKey } = await nativeTenant();
      const to = recipient();
      const [fcmToken, apnsToken] = [deviceToken(), deviceToken()];
      for (const [kind, token] of [
        ['fcm', fcmToken],
        ['apns', apnsToken],
      ] as const) {
        const res = await register(tenant, to, { kind, token });
        expect(res.status, res.text).toBe(201);
      }
      const sent = await notify(tenant, to, { order: 7 });
      expect(sent.status).toBe(202);
      const id = sent.body.id as string;
      await eventually(
        () => fcm.accepted(fcmToken).length === 1 && apns.accepted(apnsToken).length === 1,
        'both pushes',
        WAIT_MS,
      );
      const f = fcm.accepted(fcmToken)[0];
      expect(f?.project).toBe('herald-e2e');
      expect(fcm.grants.some((g) => g.iss === f?.clientEmail && g.aud === fcm.tokenUri)).toBe(true);
      expect(f?.message).toMatchObject({
        token: fcmToken,
        notification: { title: 'Order shipped' },
        data: { id, count: '1' },
      });
      expect((f?.message.data as Record<string, string> | undefined)?.payload).toBeUndefined();
      const a = apns.accepted(apnsToken)[0];
      expect(a).toMatchObject({
        keyId: apnsKey.key_id,
        teamId: apnsKey.team_id,
        topic: 'com.example.app',
      });
      expect(a?.payload).toMatchObject({
        aps: { alert: { title: 'Order shipped' } },
        herald: { id },
      });
      expect(JSON.stringify(a?.payload)).not.toContain('"order"');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'carries the payload for a --push-include-payload key; UNREGISTERED and BadDeviceToken delete the subscriptions',
    async () => {
      const { tenant } = await nativeTenant({ includePayload: true });
      const to = recipient();
      const [fcmToken, apnsToken] = [deviceToken(), deviceToken()];
      for (const [kind, token] of [
        ['fcm', fcmToken],
        ['apns', apnsToken],
      ] as const)
        expect((await register(tenant, to, { kind, token })).status).toBe(201);
      expect((await notify(tenant, to, { order: 8 })).status).toBe(202);
      await eventually(
        () => fcm.accepted(fcmToken).length === 1 && apns.accepted(apnsToken).length === 1,
        'both pushes',
        WAIT_MS,
      );
      const data = fcm.accepted(fcmToken)[0]?.message.data as Record<string, string>;
      expect(JSON.parse(data.payload ?? '')).toEqual({ order: 8 });
      expect(apns.accepted(apnsToken)[0]?.payload).toMatchObject({
        herald: { payload: { order: 8 } },
      });

      fcm.script(fcmToken, { status: 404, errorCode: 'UNREGISTERED' });
      apns.script(apnsToken, { status: 400, reason: 'BadDeviceToken' });
      expect((await notify(tenant, to, { order: 9 })).status).toBe(202);
      const listed = async () =>
        (
          (await stack().admin([
            'push',
            'subscriptions',
            '--account',
            tenant.account,
            '--json',
          ])) as { subscriptions: unknown[] }
        ).subscriptions.length;
      await eventually(async () => (await listed()) === 0, 'both deleted', WAIT_MS);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a token-requiring key refuses a device registration without recipient_token, takes one with it',
    async () => {
      const { tenant } = await nativeTenant({ requireToken: true });
      const to = recipient();
      const without = await register(tenant, to, { kind: 'fcm', token: deviceToken() });
      expect(without.status).toBe(401);
      expect(without.body.error.code).toBe('missing_token');
      const secret = tenant.key.signing_secret ?? '';
      const jwt = await new SignJWT({ sub: to })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(new TextEncoder().encode(secret));
      const withToken = await register(tenant, to, {
        kind: 'apns',
        token: deviceToken(),
        recipient_token: jwt,
      });
      expect(withToken.status, withToken.text).toBe(201);
    },
    TEST_TIMEOUT_MS,
  );
});

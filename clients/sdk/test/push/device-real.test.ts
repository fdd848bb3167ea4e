import { randomBytes, randomUUID } from 'node:crypto';
import { PushSubscriptionView } from '@herald/proto';
import { HeraldPush } from '@herald/sdk/push';
import { type Stack, startStack } from '@herald/testkit';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tlsRuntime } from '../stack/tls-runtime.js';

/**
 * `registerDevice` and `unregisterDevice` of dist/push.js against the real routes: auth,
 * ingress-api and the status service on a real nats-server and Postgres, over TLS with the stack's
 * CA. What device.test.ts checks against a server holding the contract, here checked against the
 * server itself: the device token as `token`, the recipient token as `recipient_token`, and the
 * status service keeping (then deleting) the subscription the admin CLI lists.
 */
describe('push.registerDevice against the real routes', () => {
  let stack: Stack;
  let runtime: ReturnType<typeof tlsRuntime>;

  beforeAll(async () => {
    stack = await startStack({
      services: ['auth', 'ingress-api', 'status'],
      env: { status: { WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64') } },
    });
    runtime = tlsRuntime(stack.ca);
  }, 240_000);

  afterAll(async () => {
    await runtime?.close();
    await stack?.stop();
  }, 60_000);

  const listed = async (account: string, recipient: string) => {
    const out = (await stack.admin([
      'push',
      'subscriptions',
      '--account',
      account,
      '--recipient',
      recipient,
      '--json',
    ])) as { subscriptions: unknown[] };
    return out.subscriptions.map((s) => PushSubscriptionView.parse(s));
  };

  const pushFor = (apiKey: string, getToken?: () => Promise<string>) =>
    new HeraldPush({
      apiKey,
      client: 'mobile',
      baseUrl: stack.baseUrl,
      device: 'phone-1',
      fetch: runtime.fetch,
      ...(getToken ? { getToken } : {}),
    });

  it('registers an FCM and an APNs token, the same id again, and unregisters both', async () => {
    const { id: account } = await stack.createAccount();
    const key = await stack.createKey({ account, kind: 'test', push: { afterMs: 1000 } });
    const recipient = randomUUID();
    const push = pushFor(key.key);
    const fcm = await push.registerDevice({
      recipient,
      kind: 'fcm',
      token: `fcm:${'A'.repeat(150)}`,
    });
    const apns = await push.registerDevice({ recipient, kind: 'apns', token: 'ab'.repeat(32) });
    expect(fcm.id).not.toBe(apns.id);
    expect(
      await push.registerDevice({ recipient, kind: 'fcm', token: `fcm:${'A'.repeat(150)}` }),
    ).toEqual({ id: fcm.id });
    const views = await listed(account, recipient);
    expect(views.map((v) => [v.id, v.kind, v.device, v.key_id]).sort()).toEqual(
      [
        [fcm.id, 'fcm', 'phone-1', key.id],
        [apns.id, 'apns', 'phone-1', key.id],
      ].sort(),
    );
    await push.unregisterDevice(fcm.id, { recipient });
    await push.unregisterDevice(apns.id, { recipient });
    expect(await listed(account, recipient)).toEqual([]);
  }, 120_000);

  it('sends the recipient token a token-requiring key needs as recipient_token', async () => {
    const { id: account } = await stack.createAccount();
    const key = await stack.createKey({
      account,
      kind: 'test',
      push: { afterMs: 1000 },
      requireToken: true,
    });
    const recipient = randomUUID();
    const secret = new TextEncoder().encode(key.signing_secret ?? '');
    const mint = () =>
      new SignJWT({ sub: recipient })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(secret);
    // Without a token the real route refuses it, as /ws/connect would.
    await expect(
      pushFor(key.key).registerDevice({ recipient, kind: 'apns', token: 'cd'.repeat(32) }),
    ).rejects.toMatchObject({ code: 'missing_token' });
    const push = pushFor(key.key, mint);
    const { id } = await push.registerDevice({ recipient, kind: 'apns', token: 'cd'.repeat(32) });
    expect((await listed(account, recipient)).map((v) => v.id)).toEqual([id]);
    await push.unregisterDevice(id, { recipient });
    expect(await listed(account, recipient)).toEqual([]);
  }, 120_000);
});

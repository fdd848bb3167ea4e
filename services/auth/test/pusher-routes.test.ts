import { randomBytes } from 'node:crypto';
import { pusherRecipient } from '@herald/access';
import {
  AuthInvalidate,
  PUSHER_APP_SUBJECT,
  PusherAppCreated,
  PusherAppList,
  PusherAppReply,
  PusherAppRotated,
  PusherUserMapping,
  subjects,
} from '@herald/proto';
import { JSONCodec } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AccountApiStack, startAccountApi, type User } from './account-api-fixture.js';

/**
 * The account API's /v1/pusher/apps (issue 41) over real HTTPS, on a private Postgres and
 * nats-server: session and CSRF, validation naming the field, the secret shown once, and tenant
 * isolation (another account's app is 404, untouched).
 */

const codec = JSONCodec();
let stack: AccountApiStack;
const broadcasts: AuthInvalidate[] = [];

beforeAll(async () => {
  stack = await startAccountApi({
    SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    MAX_PUSHER_APPS_PER_ACCOUNT: '2',
  });
  stack.operatorNc.subscribe(subjects.authInvalidate, {
    callback: (_err, msg) => broadcasts.push(AuthInvalidate.parse(codec.decode(msg.data))),
  });
  await stack.operatorNc.flush();
});

afterAll(async () => {
  await stack?.stop();
});

async function testKey(user: User): Promise<string> {
  const res = await stack.call('POST', '/v1/keys/test', {
    body: { client: 'mobile' },
    headers: stack.as(user),
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function create(user: User, body: unknown) {
  return stack.call('POST', '/v1/pusher/apps', { body, headers: stack.as(user) });
}

async function lookup(key: string): Promise<PusherAppReply> {
  const msg = await stack.operatorNc.request(PUSHER_APP_SUBJECT, codec.encode({ v: 1, key }), {
    timeout: 5000,
  });
  return PusherAppReply.parse(codec.decode(msg.data));
}

describe('/v1/pusher/apps', () => {
  it('creates (secret shown once), lists without it, rotates and deletes, broadcasting each', async () => {
    const user = await stack.newUser();
    const keyId = await testKey(user);
    const made = await create(user, {
      key_id: keyId,
      user_channel: 'private-App.Models.User.{id}',
    });
    expect(made.status).toBe(201);
    const app = PusherAppCreated.strict().parse(made.body);
    expect(app).toMatchObject({
      key_id: keyId,
      user_ids: 'uuid',
      user_channel: 'private-App.Models.User.{id}',
    });
    await stack.operatorNc.flush();
    expect(broadcasts).toContainEqual({ v: 1, key_id: keyId, reason: 'pusher_app' });
    expect(await lookup(app.key)).toMatchObject({
      ok: true,
      app: { app_id: app.app_id, secret: app.secret, account_id: user.accountId },
      key: { id: keyId, account_id: user.accountId },
    });

    const listed = await stack.call('GET', '/v1/pusher/apps', { headers: stack.as(user) });
    expect(listed.status).toBe(200);
    const { secret: _, ...view } = app;
    expect(PusherAppList.parse(listed.body)).toEqual({ apps: [view] });
    expect(JSON.stringify(listed.body)).not.toContain(app.secret);

    broadcasts.length = 0;
    const rotated = await stack.call('POST', `/v1/pusher/apps/${app.app_id}/rotate-secret`, {
      headers: stack.as(user),
    });
    expect(rotated.status).toBe(200);
    const fresh = PusherAppRotated.strict().parse(rotated.body);
    expect(fresh).toMatchObject({ app_id: app.app_id, key: app.key });
    expect(fresh.secret).not.toBe(app.secret);
    expect(await lookup(app.key)).toMatchObject({ ok: true, app: { secret: fresh.secret } });
    await stack.operatorNc.flush();
    expect(broadcasts).toEqual([{ v: 1, key_id: keyId, reason: 'pusher_app' }]);

    broadcasts.length = 0;
    const gone = await stack.call('DELETE', `/v1/pusher/apps/${app.app_id}`, {
      headers: stack.as(user),
    });
    expect(gone.status).toBe(204);
    expect(gone.body).toBeUndefined();
    await stack.operatorNc.flush();
    expect(broadcasts).toEqual([{ v: 1, key_id: keyId, reason: 'pusher_app' }]);
    expect(await lookup(app.key)).toMatchObject({ ok: false, error: { code: 'invalid_api_key' } });
    const again = await stack.call('DELETE', `/v1/pusher/apps/${app.app_id}`, {
      headers: stack.as(user),
    });
    expect(again.status).toBe(404);
    expect(again.body.error).toMatchObject({ code: 'not_found', field: 'app_id' });
  });

  it('needs a session, and CSRF on changes', async () => {
    const user = await stack.newUser();
    expect((await stack.call('GET', '/v1/pusher/apps')).status).toBe(401);
    const noCsrf = await stack.call('POST', '/v1/pusher/apps', {
      body: {},
      headers: { cookie: user.cookie, origin: 'https://dashboard.example.com' },
    });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.error.code).toBe('csrf_failed');
  });

  it('refuses bad bodies naming the field', async () => {
    const user = await stack.newUser();
    const keyId = await testKey(user);
    const cases: [unknown, number, string, string][] = [
      // A free account has no Live key to default to.
      [{}, 400, 'missing_field', 'key_id'],
      [{ key_id: 42 }, 400, 'invalid_field', 'key_id'],
      [{ key_id: 'nope' }, 400, 'invalid_field', 'key_id'],
      [{ key_id: crypto.randomUUID() }, 404, 'not_found', 'key_id'],
      [{ key_id: keyId, user_ids: 'email' }, 400, 'invalid_field', 'user_ids'],
      [{ key_id: keyId, user_channel: 'public-{id}' }, 400, 'invalid_field', 'user_channel'],
      [{ key_id: keyId, user_channel: 'private-x' }, 400, 'invalid_field', 'user_channel'],
      [{ key_id: keyId, colour: 'red' }, 400, 'invalid_field', 'colour'],
    ];
    for (const [body, status, code, field] of cases) {
      const res = await create(user, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.error).toMatchObject({ code, field });
    }
    const missing = await create(user, {});
    expect(missing.body.error.message).toMatch(/no unrevoked Live key/);
    const listed = await stack.call('GET', '/v1/pusher/apps', { headers: stack.as(user) });
    expect(listed.body).toEqual({ apps: [] });
  });

  it("maps a user id to its recipient, by the app's user_ids", async () => {
    const user = await stack.newUser();
    const keyId = await testKey(user);
    const uuidApp = PusherAppCreated.parse((await create(user, { key_id: keyId })).body);
    const anyApp = PusherAppCreated.parse(
      (await create(user, { key_id: keyId, user_ids: 'any' })).body,
    );
    const id = crypto.randomUUID();
    const map = (app: string, userId: string) =>
      stack.call('GET', `/v1/pusher/apps/${app}/users/${encodeURIComponent(userId)}`, {
        headers: stack.as(user),
      });
    const upper = await map(uuidApp.app_id, id.toUpperCase());
    expect(PusherUserMapping.parse(upper.body)).toEqual({
      user_id: id.toUpperCase(),
      recipient: id,
    });
    const refused = await map(uuidApp.app_id, '42');
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'invalid_field', field: 'user_id' });
    const mapped = await map(anyApp.app_id, '42');
    expect(mapped.body).toEqual({
      user_id: '42',
      recipient: pusherRecipient(anyApp.app_id, '42', 'any'),
    });
    // MAX_PUSHER_APPS_PER_ACCOUNT is 2 here.
    const third = await create(user, { key_id: keyId });
    expect(third.status).toBe(409);
    expect(third.body.error).toMatchObject({ code: 'too_many_apps' });
  });

  it("never shows, changes or deletes another account's app, nor binds to its key", async () => {
    const alice = await stack.newUser();
    const bob = await stack.newUser();
    const aliceKey = await testKey(alice);
    await testKey(bob);
    const app = PusherAppCreated.parse((await create(alice, { key_id: aliceKey })).body);

    const bobs = await stack.call('GET', '/v1/pusher/apps', { headers: stack.as(bob) });
    expect(bobs.body).toEqual({ apps: [] });
    for (const [method, path] of [
      ['DELETE', `/v1/pusher/apps/${app.app_id}`],
      ['POST', `/v1/pusher/apps/${app.app_id}/rotate-secret`],
      ['GET', `/v1/pusher/apps/${app.app_id}/users/${crypto.randomUUID()}`],
    ] as const) {
      const res = await stack.call(method, path, { headers: stack.as(bob) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'not_found', field: 'app_id' });
    }
    const stolen = await create(bob, { key_id: aliceKey });
    expect(stolen.status).toBe(404);
    expect(stolen.body.error).toMatchObject({ code: 'not_found', field: 'key_id' });

    // Alice's app is as it was: same secret, still listed.
    expect(await lookup(app.key)).toMatchObject({ ok: true, app: { secret: app.secret } });
    const alices = await stack.call('GET', '/v1/pusher/apps', { headers: stack.as(alice) });
    expect(PusherAppList.parse(alices.body).apps.map((a) => a.app_id)).toEqual([app.app_id]);
  });
});

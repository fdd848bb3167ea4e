import { randomBytes } from 'node:crypto';
import { hashKey } from '@herald/access';
import { createLogger, SecretBox } from '@herald/kit';
import {
  AuthInvalidate,
  AuthVerifyReply,
  PUSHER_APP_SUBJECT,
  PusherAppCreated,
  PusherAppList,
  PusherAppReply,
  PusherAppRotated,
  PusherAppView,
  subjects,
} from '@herald/proto';
import { connect, JSONCodec, type NatsConnection } from 'nats';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts.js';
import { loadConfig } from '../src/config.js';
import { type AuthService, createAuthService } from '../src/index.js';
import { revokeApiKey } from '../src/keys/store.js';
import { appSealContext } from '../src/pusher/secrets.js';
import { createPusherApp } from '../src/pusher/store.js';
import { FAR_FUTURE, TEST_CATALOGUE } from './catalogue.js';
import { inProcessAdmin, type Run } from './cli.js';
import { natsOf, type Servers, startServers } from './servers.js';

/**
 * Pusher apps (issue 41) through the admin CLI's `pusher-app` commands, and their lookup on
 * rt.auth.pusher as the edge and ingress make it (each as its own NATS user), against a private
 * Postgres and nats-server. The account API's routes: pusher-routes.test.ts.
 */

const codec = JSONCodec();
const SECRET_KEY = randomBytes(32).toString('base64');
const box = new SecretBox(Buffer.from(SECRET_KEY, 'base64'));

let servers: Servers;
let authNc: NatsConnection;
let edgeNc: NatsConnection;
let ingressNc: NatsConnection;
let service: AuthService;
/** The auth service's clock: moved past a plan's end instead of waiting for it. */
let clock = Date.now();
const broadcasts: AuthInvalidate[] = [];

beforeAll(async () => {
  servers = await startServers({ nats: true });
  const nats = natsOf(servers);
  [authNc, edgeNc, ingressNc] = await Promise.all([
    connect(nats.connectOptions('auth')),
    connect(nats.connectOptions('socket-edge')),
    connect(nats.connectOptions('ingress-api')),
  ]);
  edgeNc.subscribe(subjects.authInvalidate, {
    callback: (_err, msg) => broadcasts.push(AuthInvalidate.parse(codec.decode(msg.data))),
  });
  const config = loadConfig({
    DATABASE_URL: servers.pg.url,
    TLS_DISABLED: 'true',
    SECRET_ENCRYPTION_KEY: SECRET_KEY,
    ...nats.env('auth'),
  });
  service = createAuthService(config, {
    nc: authNc,
    db: servers.db,
    logger: createLogger('auth-test', 'silent'),
    catalogue: TEST_CATALOGUE,
    now: () => clock,
  });
  await Promise.all([authNc.flush(), edgeNc.flush()]);
});

afterAll(async () => {
  await service?.close();
  await Promise.all([authNc?.close(), edgeNc?.close(), ingressNc?.close()]);
  await servers?.stop();
});

beforeEach(() => {
  clock = Date.now();
});

function env(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    DATABASE_URL: servers.pg.url,
    ...natsOf(servers).env('auth'),
    SECRET_ENCRYPTION_KEY: SECRET_KEY,
    ...extra,
  };
}

function admin(...args: string[]): Promise<Run> {
  return inProcessAdmin(args, env());
}

/** The one JSON object a --json run printed. */
function json(run: Run): Record<string, unknown> {
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

/** A fresh account on a paid plan, with one Live and one Test key. */
async function tenant(): Promise<{ account: string; live: string; test: string; liveKey: string }> {
  const email = `pusher-${crypto.randomUUID()}@example.com`;
  const plan = { plan: { id: 'hobby' }, period_end: FAR_FUTURE };
  const account = (await createAccount(servers.db, { email }, plan)).id;
  const live = json(
    await admin(
      'key',
      'create',
      '--account',
      account,
      '--kind',
      'live',
      '--client',
      'mobile',
      '--json',
    ),
  );
  const test = json(
    await admin(
      'key',
      'create',
      '--account',
      account,
      '--kind',
      'test',
      '--client',
      'mobile',
      '--json',
    ),
  );
  return { account, live: String(live.id), test: String(test.id), liveKey: String(live.key) };
}

async function lookup(
  by: { key: string } | { app_id: string },
  nc = edgeNc,
): Promise<PusherAppReply> {
  const msg = await nc.request(PUSHER_APP_SUBJECT, codec.encode({ v: 1, ...by }), {
    timeout: 5000,
  });
  return PusherAppReply.parse(codec.decode(msg.data));
}

async function verify(key: string): Promise<AuthVerifyReply> {
  const msg = await ingressNc.request(
    subjects.authVerify,
    codec.encode({ v: 1, key_hash: hashKey(key) }),
    { timeout: 5000 },
  );
  return AuthVerifyReply.parse(codec.decode(msg.data));
}

function withoutBroadcast(out: Record<string, unknown>): Record<string, unknown> {
  const { broadcast: _, ...rest } = out;
  return rest;
}

async function broadcastSeen(keyId: string): Promise<void> {
  await edgeNc.flush();
  expect(broadcasts).toContainEqual({ v: 1, key_id: keyId, reason: 'pusher_app' });
}

describe('pusher-app commands', () => {
  it('creates an app bound to a key, its secret shown once and sealed at rest, with a broadcast', async () => {
    const t = await tenant();
    const created = json(
      await admin(
        'pusher-app',
        'create',
        '--account',
        t.account,
        '--key-id',
        t.test,
        '--user-ids',
        'any',
        '--user-channel',
        'private-App.Models.User.{id}',
        '--json',
      ),
    );
    const app = PusherAppCreated.parse(created);
    expect(created.broadcast).toBe(true);
    expect(app).toMatchObject({
      key_id: t.test,
      user_ids: 'any',
      user_channel: 'private-App.Models.User.{id}',
    });
    expect(app.app_id).toMatch(/^[1-9][0-9]{9}$/);
    expect(app.key).toMatch(/^[0-9a-f]{20}$/);
    expect(app.secret).toMatch(/^[0-9a-f]{40}$/);
    await broadcastSeen(t.test);

    const row = await servers.db
      .selectFrom('pusher_apps')
      .selectAll()
      .where('app_id', '=', app.app_id)
      .executeTakeFirstOrThrow();
    expect(row.secret).not.toContain(app.secret);
    expect(box.open(row.secret, appSealContext(app.app_id))).toBe(app.secret);
    // Bound to its row: the sealed secret does not open as another app's.
    expect(() => box.open(row.secret, appSealContext('1234567890'))).toThrow();

    const listed = PusherAppList.parse(
      json(await admin('pusher-app', 'list', '--account', t.account, '--json')),
    );
    expect(listed.apps).toEqual([PusherAppView.parse({ ...app, secret: undefined })]);
    const text = await admin('pusher-app', 'list', '--account', t.account);
    expect(text.stdout).toContain(app.key);
    expect(text.stdout).not.toContain(app.secret);
  });

  it("binds to the account's only Live key by default, and names --key-id when there is none or several", async () => {
    const t = await tenant();
    const app = PusherAppCreated.parse(
      json(await admin('pusher-app', 'create', '--account', t.account, '--json')),
    );
    expect(app).toMatchObject({ key_id: t.live, user_ids: 'uuid', user_channel: null });

    await admin('key', 'create', '--account', t.account, '--kind', 'live', '--client', 'mobile');
    const two = await admin('pusher-app', 'create', '--account', t.account);
    expect(two.status).toBe(2);
    expect(two.stderr).toMatch(
      /^admin: --key-id: key_id is required: .* more than one unrevoked Live key/,
    );
  });

  it('refuses bad flags, naming each', async () => {
    const t = await tenant();
    const other = await tenant();
    const cases: [string[], RegExp][] = [
      [
        ['--key-id', t.test, '--user-ids', 'email'],
        /--user-ids: user_ids must be "uuid" .* or "any"/,
      ],
      [
        ['--key-id', t.test, '--user-channel', 'App.User.{id}'],
        /--user-channel: user_channel must be a private- channel name with exactly one \{id\}/,
      ],
      [['--key-id', t.test, '--user-channel', 'private-a.{id}.{id}'], /--user-channel: /],
      [['--key-id', other.test], /--key-id: key_id .* is not a key of account/],
      [['--key-id', 'nope'], /--key-id: key_id must be a UUID/],
    ];
    for (const [flags, message] of cases) {
      const run = await admin('pusher-app', 'create', '--account', t.account, ...flags);
      expect(run.status, flags.join(' ')).toBe(2);
      expect(run.stderr).toMatch(message);
    }
    await revokeApiKey(servers.db, t.test);
    const revoked = await admin('pusher-app', 'create', '--account', t.account, '--key-id', t.test);
    expect(revoked.stderr).toMatch(/--key-id: key_id .* is revoked/);
    const missing = await admin('pusher-app', 'create', '--account', crypto.randomUUID());
    expect(missing.stderr).toMatch(/--account: account .* does not exist/);
    const noBox = await inProcessAdmin(
      ['pusher-app', 'create', '--account', t.account, '--key-id', t.live],
      env({ SECRET_ENCRYPTION_KEY: undefined }),
    );
    expect(noBox.status).toBe(2);
    expect(noBox.stderr).toMatch(/SECRET_ENCRYPTION_KEY, which seals Pusher app secrets/);
    const listed = PusherAppList.parse(
      json(await admin('pusher-app', 'list', '--account', t.account, '--json')),
    );
    expect(listed.apps).toEqual([]);
  });

  it('rotates the secret (the lookup answers the new one) and deletes, only within the account', async () => {
    const t = await tenant();
    const other = await tenant();
    const app = PusherAppCreated.parse(
      json(
        await admin('pusher-app', 'create', '--account', t.account, '--key-id', t.live, '--json'),
      ),
    );
    broadcasts.length = 0;
    const rotated = json(
      await admin(
        'pusher-app',
        'rotate-secret',
        '--account',
        t.account,
        '--app-id',
        app.app_id,
        '--json',
      ),
    );
    expect(PusherAppRotated.strict().parse(withoutBroadcast(rotated))).toEqual({
      app_id: app.app_id,
      key: app.key,
      secret: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    expect(rotated.secret).not.toBe(app.secret);
    await broadcastSeen(t.live);
    const after = await lookup({ key: app.key });
    expect(after.ok && after.app.secret).toBe(rotated.secret);

    // Another account cannot rotate or delete it: not_found, like an app that does not exist.
    for (const cmd of ['rotate-secret', 'delete']) {
      const run = await admin(
        'pusher-app',
        cmd,
        '--account',
        other.account,
        '--app-id',
        app.app_id,
      );
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(/--app-id: app_id \d+ is not a Pusher app of this account/);
    }
    expect((await lookup({ key: app.key })).ok).toBe(true);

    broadcasts.length = 0;
    const deleted = json(
      await admin('pusher-app', 'delete', '--account', t.account, '--app-id', app.app_id, '--json'),
    );
    expect(deleted).toMatchObject({
      app_id: app.app_id,
      key: app.key,
      key_id: t.live,
      broadcast: true,
    });
    expect(deleted).not.toHaveProperty('secret');
    await broadcastSeen(t.live);
    expect(await lookup({ key: app.key })).toMatchObject({
      ok: false,
      error: { code: 'invalid_api_key' },
    });
    const again = await admin(
      'pusher-app',
      'delete',
      '--account',
      t.account,
      '--app-id',
      app.app_id,
    );
    expect(again.status).toBe(2);
    const bad = await admin('pusher-app', 'delete', '--account', t.account, '--app-id', 'abc');
    expect(bad.stderr).toMatch(/--app-id: app_id must be digits/);
  });
});

describe('pusher_apps in Postgres', () => {
  it("refuses an app bound to another account's key, whatever the code above it does", async () => {
    const t = await tenant();
    const other = await tenant();
    const insert = (keyId: string) =>
      servers.db
        .insertInto('pusher_apps')
        .values({
          app_id: String(Date.now()),
          key: randomBytes(10).toString('hex'),
          secret: 'sealed',
          account_id: t.account,
          key_id: keyId,
        })
        .execute();
    await expect(insert(other.live)).rejects.toMatchObject({
      code: '23503',
      constraint: 'pusher_apps_key_of_account',
    });
    await expect(insert(t.live)).resolves.toBeDefined();
  });
});

describe('MAX_PUSHER_APPS_PER_ACCOUNT', () => {
  it('caps the apps per account, in the CLI as in the store, and holds under parallel creations', async () => {
    const t = await tenant();
    const capped = (...flags: string[]) =>
      inProcessAdmin(
        ['pusher-app', 'create', '--account', t.account, ...flags],
        env({ MAX_PUSHER_APPS_PER_ACCOUNT: '1' }),
      );
    expect((await capped('--key-id', t.live)).status).toBe(0);
    const over = await capped('--key-id', t.live);
    expect(over.status).toBe(2);
    expect(over.stderr).toMatch(
      /holds 1 Pusher apps, the most allowed \(1, MAX_PUSHER_APPS_PER_ACCOUNT\): delete one/,
    );
    const bad = await inProcessAdmin(
      ['pusher-app', 'create', '--account', t.account],
      env({ MAX_PUSHER_APPS_PER_ACCOUNT: '0' }),
    );
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/MAX_PUSHER_APPS_PER_ACCOUNT .*at least 1/);

    const other = await tenant();
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () =>
        createPusherApp(servers.db, box, other.account, { key_id: other.test }, { maxApps: 3 }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    for (const r of results.filter((r) => r.status === 'rejected')) {
      expect(r.reason).toMatchObject({ code: 'too_many_apps', status: 409 });
    }
    const listed = PusherAppList.parse(
      json(await admin('pusher-app', 'list', '--account', other.account, '--json')),
    );
    expect(listed.apps).toHaveLength(3);
  });
});

describe('rt.auth.pusher', () => {
  it('answers the app by key (the edge) and by app id (ingress), its key verified as rt.auth.verify does', async () => {
    const t = await tenant();
    const app = PusherAppCreated.parse(
      json(
        await admin(
          'pusher-app',
          'create',
          '--account',
          t.account,
          '--key-id',
          t.live,
          '--user-channel',
          'private-user.{id}',
          '--json',
        ),
      ),
    );
    const expected = {
      app_id: app.app_id,
      key: app.key,
      secret: app.secret,
      account_id: t.account,
      key_id: t.live,
      user_ids: 'uuid',
      user_channel: 'private-user.{id}',
    };
    const verified = await verify(t.liveKey);
    if (!verified.ok) throw new Error('the live key should verify');
    const byKey = await lookup({ key: app.key }, edgeNc);
    const byId = await lookup({ app_id: app.app_id }, ingressNc);
    for (const reply of [byKey, byId]) {
      expect(reply).toEqual({ v: 1, ok: true, app: expected, key: verified.key });
    }
  });

  it('refuses an unknown app or a malformed request with invalid_api_key', async () => {
    for (const by of [{ key: 'ffffffffffffffffffff' }, { app_id: '999' }]) {
      const reply = await lookup(by);
      expect(reply).toMatchObject({ v: 1, ok: false, error: { code: 'invalid_api_key' } });
      if (!reply.ok) expect(reply.error.message).toMatch(/no Pusher app/);
    }
    for (const body of [
      { v: 1 },
      { v: 2, key: 'x' },
      { v: 1, key: 'x', app_id: '1' },
      'nonsense',
    ]) {
      const msg = await edgeNc.request(PUSHER_APP_SUBJECT, codec.encode(body), { timeout: 5000 });
      const reply = PusherAppReply.parse(codec.decode(msg.data));
      expect(reply).toMatchObject({ ok: false, error: { code: 'invalid_api_key' } });
      if (!reply.ok) expect(reply.error.message).toMatch(/malformed/);
    }
  });

  it("answers the bound key's refusal exactly as rt.auth.verify does: revoked, plan inactive", async () => {
    const t = await tenant();
    const app = PusherAppCreated.parse(
      json(
        await admin('pusher-app', 'create', '--account', t.account, '--key-id', t.live, '--json'),
      ),
    );
    // The plan's period over: the Live key is plan_inactive, and so is its app.
    clock = FAR_FUTURE.getTime() + 86_400_000;
    const lapsed = await lookup({ app_id: app.app_id });
    expect(lapsed).toMatchObject({ ok: false, error: { code: 'plan_inactive' } });
    expect(lapsed).toEqual(await verify(t.liveKey));
    clock = Date.now();

    const revoke = json(await admin('key', 'revoke', '--key', t.live, '--json'));
    expect(revoke.broadcast).toBe(true);
    const revoked = await lookup({ key: app.key });
    expect(revoked).toMatchObject({ ok: false, error: { code: 'key_revoked' } });
    expect(revoked).toEqual(await verify(t.liveKey));
    // The app stays, listed, until deleted: a revoked key's apps answer key_revoked.
    const listed = PusherAppList.parse(
      json(await admin('pusher-app', 'list', '--account', t.account, '--json')),
    );
    expect(listed.apps.map((a) => a.app_id)).toEqual([app.app_id]);
  });
});

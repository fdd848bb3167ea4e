import { hashKey, KeyVerifier } from '@herald/access';
import { createLogger } from '@herald/kit';
import { AuthInvalidate, AuthVerifyReply, HeraldError, subjects } from '@herald/proto';
import type { Kysely } from 'kysely';
import { connect, JSONCodec, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts.js';
import { loadConfig } from '../src/config.js';
import type { AuthDb } from '../src/db-schema.js';
import { type AuthService, createAuthService } from '../src/index.js';
import { issueKey, type KeyRules, resetTestKey } from '../src/keys/issuing.js';
import { TEST_KEY_TTL_MS } from '../src/keys/key-spec.js';
import { revokeApiKey } from '../src/keys/store.js';
import { resolvePlanChange, setSubscription } from '../src/subscriptions.js';
import { FAR_FUTURE, TEST_CATALOGUE } from './catalogue.js';
import { inProcessAdmin, writeCatalogue } from './cli.js';
import { natsOf, type Servers, startServers } from './servers.js';

const logger = createLogger('auth-test', 'silent');
const codec = JSONCodec();
const HOUR = 3600_000;

let servers: Servers;
let db: Kysely<AuthDb>;
let authNc: NatsConnection;
let callerNc: NatsConnection;
let service: AuthService;
let rules: KeyRules;
let plansFile: string;
/** The auth service's clock: tests move it instead of sleeping. */
let clock = Date.now();
/** Every invalidation broadcast, as a caller receives them. */
const broadcasts: AuthInvalidate[] = [];

beforeAll(async () => {
  servers = await startServers({ nats: true });
  db = servers.db;
  const nats = natsOf(servers);
  [authNc, callerNc] = await Promise.all([
    connect(nats.connectOptions('auth')),
    connect(nats.connectOptions()),
  ]);
  callerNc.subscribe(subjects.authInvalidate, {
    callback: (_err, msg) => broadcasts.push(AuthInvalidate.parse(codec.decode(msg.data))),
  });
  const config = loadConfig({
    DATABASE_URL: servers.pg.url,
    TLS_DISABLED: 'true',
    ...nats.env('auth'),
  });
  service = createAuthService(config, {
    nc: authNc,
    db,
    logger,
    catalogue: TEST_CATALOGUE,
    now: () => clock,
  });
  await Promise.all([authNc.flush(), callerNc.flush()]);
  rules = { db, catalogue: TEST_CATALOGUE, maxLiveKeys: 3 };
  plansFile = writeCatalogue(TEST_CATALOGUE);
});

afterAll(async () => {
  await service?.close();
  await Promise.all([authNc?.close(), callerNc?.close()]);
  await servers?.stop();
});

/** Asks rt.auth.verify directly, as KeyVerifier does, without its cache. */
async function ask(key: string): Promise<AuthVerifyReply> {
  const msg = await callerNc.request(
    subjects.authVerify,
    codec.encode({ v: 1, key_hash: hashKey(key) }),
    { timeout: 2000 },
  );
  return AuthVerifyReply.parse(codec.decode(msg.data));
}

function errorCode(reply: AuthVerifyReply): string {
  return reply.ok ? 'ok' : reply.error.code;
}

async function account(plan?: string, until?: Date): Promise<string> {
  const email = `life-${crypto.randomUUID()}@example.com`;
  const change = plan ? resolvePlanChange(TEST_CATALOGUE, plan, until) : undefined;
  return (await createAccount(db, { email }, change)).id;
}

function admin(...argv: string[]) {
  return inProcessAdmin(argv, {
    DATABASE_URL: servers.pg.url,
    ...natsOf(servers).env('auth'),
    PLANS_FILE: plansFile,
  });
}

async function refusal(promise: Promise<unknown>): Promise<HeraldError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof HeraldError)) throw new Error(`expected a HeraldError, got ${String(err)}`);
  return err;
}

describe('the Test key', () => {
  it('works at 3h59m and is refused with key_expired at 4h00m01s', async () => {
    const t0 = Date.parse('2025-06-01T08:00:00.000Z');
    const key = await issueKey(
      rules,
      await account(),
      { kind: 'test', client: 'mobile' },
      new Date(t0),
    );
    expect(key.expires_at?.getTime()).toBe(t0 + TEST_KEY_TTL_MS);

    clock = t0 + 3 * HOUR + 59 * 60_000;
    const before = await ask(key.key);
    expect(before).toMatchObject({
      ok: true,
      key: {
        id: key.id,
        kind: 'test',
        expires_at: t0 + 4 * HOUR,
        plan: 'free',
        plan_until: null,
        limits: TEST_CATALOGUE.test_key_limits,
      },
    });

    clock = t0 + 4 * HOUR + 1000;
    const after = await ask(key.key);
    expect(errorCode(after)).toBe('key_expired');
    expect(after.ok === false && after.error.message).toContain('2025-06-01T12:00:00.000Z');
  });

  it('is generated once: a second request gets 409 test_key_exists naming support, even after a revocation', async () => {
    const id = await account();
    await issueKey(rules, id, { kind: 'test', client: 'web', domain: 'http://localhost:5173' });
    const again = await refusal(issueKey(rules, id, { kind: 'test', client: 'mobile' }));
    expect(again).toMatchObject({ code: 'test_key_exists', status: 409 });
    expect(again.message).toMatch(/support can reset|ask support to reset/);

    const [first] = await db
      .selectFrom('api_keys')
      .select('id')
      .where('account_id', '=', id)
      .execute();
    await revokeApiKey(db, first?.id ?? '');
    expect((await refusal(issueKey(rules, id, { kind: 'test', client: 'mobile' }))).code).toBe(
      'test_key_exists',
    );

    const cli = await admin(
      'key',
      'create',
      '--account',
      id,
      '--kind',
      'test',
      '--client',
      'mobile',
    );
    expect(cli.status).toBe(2);
    expect(cli.stdout).toBe('');
    expect(cli.stderr).toMatch(/--kind: account .* already has its Test key.*key reset-test/);
  });

  it('yields one key when two generations race (the database decides)', async () => {
    const id = await account();
    const results = await Promise.allSettled(
      [0, 1].map(() => issueKey(rules, id, { kind: 'test', client: 'mobile' })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected');
    expect(rejected?.status === 'rejected' && rejected.reason).toMatchObject({
      code: 'test_key_exists',
    });
  });

  it('is reset by support: the old value stops at once, a new 4-hour key is printed', async () => {
    clock = Date.now();
    const id = await account();
    const old = await issueKey(rules, id, {
      kind: 'test',
      client: 'web',
      domain: 'https://app.example.com',
    });
    const verifier = new KeyVerifier(callerNc, logger, { ttlMs: 10 * 60_000 });
    try {
      expect((await verifier.verify(old.key)).id).toBe(old.id);
      broadcasts.length = 0;
      const before = Date.now();
      const run = await admin('key', 'reset-test', '--account', id, '--json');
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      const printed = JSON.parse(run.stdout) as Record<string, unknown>;
      // The same object `key create --json` prints.
      expect(printed).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: null,
        key: expect.stringMatching(/^hk_test_[0-9A-Za-z]{43}$/),
        kind: 'test',
        client: 'web',
        domain: 'https://app.example.com',
        expires_at: expect.any(String),
        scope: 'both',
        require_token: false,
        inbox_days: null,
        allow_unsigned_recipients: false,
        webhook_payload: false,
        push: null,
        tokens_by_default: false,
        token_warning: expect.stringMatching(/^No recipient tokens: /),
      });
      const expires = Date.parse(String(printed.expires_at));
      expect(expires).toBeGreaterThanOrEqual(before + TEST_KEY_TTL_MS);
      expect(expires).toBeLessThanOrEqual(Date.now() + TEST_KEY_TTL_MS);

      // The broadcast was flushed before the CLI returned; a round trip on the caller's
      // connection guarantees the caller has read it.
      await callerNc.flush();
      expect(broadcasts).toEqual([{ v: 1, key_id: old.id, account_id: id, reason: 'reset' }]);
      expect((await refusal(verifier.verify(old.key))).code).toBe('key_revoked');
      expect((await verifier.verify(String(printed.key))).id).toBe(printed.id);
      // Still one Test key for the user: no self-service second one after a reset either.
      expect(
        (
          await refusal(
            issueKey(rules, id, { kind: 'test', client: 'web', domain: 'https://app.example.com' }),
          )
        ).code,
      ).toBe('test_key_exists');
    } finally {
      verifier.close();
    }
  });

  it('cannot be reset for an account that never had one', async () => {
    const run = await admin('key', 'reset-test', '--account', await account());
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/--account: account .* has no Test key to reset/);
    const unknown = await refusal(resetTestKey(db, '6b1c3a4e-1111-4111-8111-111111111111'));
    expect(unknown).toMatchObject({ code: 'not_found', field: 'account' });
  });

  it('keeps working when the paid plan lapses (only Live keys need one)', async () => {
    const until = Date.parse('2025-06-01T00:00:00Z');
    const id = await account('hobby', new Date(until));
    const key = await issueKey(
      rules,
      id,
      { kind: 'test', client: 'mobile' },
      new Date(until - HOUR),
    );
    clock = until + 1000;
    expect(await ask(key.key)).toMatchObject({
      ok: true,
      key: { plan: 'hobby', plan_until: until, limits: TEST_CATALOGUE.test_key_limits },
    });
  });
});

describe('Live keys and plans', () => {
  it('are refused on the free plan with 403 plan_required and accepted on Hobby', async () => {
    clock = Date.now();
    const id = await account();
    const refused = await refusal(issueKey(rules, id, { kind: 'live', client: 'mobile' }));
    expect(refused).toMatchObject({ code: 'plan_required', status: 403 });
    expect(refused.message).toBe(
      'Live keys need an active paid plan, and the account is on the Free plan: move to Hobby or Startup, or use the Test key',
    );

    const run = await admin(
      'account',
      'set-plan',
      '--account',
      id,
      '--plan',
      'hobby',
      '--until',
      '2099-01-01',
      '--json',
    );
    expect(run.status).toBe(0);
    const live = await issueKey(rules, id, { kind: 'live', client: 'mobile' });
    expect(live.expires_at).toBeNull();
    expect(await ask(live.key)).toMatchObject({
      ok: true,
      key: {
        kind: 'live',
        expires_at: null,
        plan: 'hobby',
        plan_until: FAR_FUTURE.getTime(),
        limits: TEST_CATALOGUE.plans[1]?.limits,
      },
    });
  });

  it('answer plan_inactive from the instant the period ends, not a millisecond before', async () => {
    const end = Date.parse('2025-07-01T00:00:00Z');
    const id = await account('startup', new Date(end));
    const key = await issueKey(rules, id, { kind: 'live', client: 'mobile' }, new Date(end - HOUR));
    clock = end - 1;
    expect(errorCode(await ask(key.key))).toBe('ok');
    clock = end;
    const lapsed = await ask(key.key);
    expect(errorCode(lapsed)).toBe('plan_inactive');
    expect(lapsed.ok === false && lapsed.error.message).toMatch(
      /Startup plan lapsed at 2025-07-01T00:00:00.000Z: renew/,
    );
    // No new Live key on a lapsed plan either.
    expect(
      (await refusal(issueKey(rules, id, { kind: 'live', client: 'mobile' }, new Date(end)))).code,
    ).toBe('plan_required');
  });

  it('lapse and renewal reach cached verifications at once through the plan_changed broadcast', async () => {
    clock = Date.now();
    const id = await account('hobby', FAR_FUTURE);
    const key = await issueKey(rules, id, { kind: 'live', client: 'mobile' });
    const verifier = new KeyVerifier(callerNc, logger, { ttlMs: 10 * 60_000 });
    try {
      expect((await verifier.verify(key.key)).plan_until).toBe(FAR_FUTURE.getTime());
      broadcasts.length = 0;
      const lapse = await admin(
        'account',
        'set-plan',
        '--account',
        id,
        '--plan',
        'hobby',
        '--until',
        '2020-01-01',
      );
      expect(lapse.status).toBe(0);
      expect(lapse.stdout).toMatch(/already past/);
      await callerNc.flush();
      expect(broadcasts).toEqual([{ v: 1, account_id: id, reason: 'plan_changed' }]);
      const refused = await refusal(verifier.verify(key.key));
      expect(refused).toMatchObject({ code: 'plan_inactive', status: 403 });
      // The refusal is cached too; the renewal's broadcast must drop it.
      expect((await refusal(verifier.verify(key.key))).code).toBe('plan_inactive');

      const renew = await admin(
        'account',
        'set-plan',
        '--account',
        id,
        '--plan',
        'hobby',
        '--until',
        '2099-01-01',
        '--json',
      );
      expect(JSON.parse(renew.stdout)).toEqual({
        account_id: id,
        plan: 'hobby',
        period_end: '2099-01-01T00:00:00.000Z',
        broadcast: true,
      });
      await callerNc.flush();
      expect((await verifier.verify(key.key)).id).toBe(key.id);
    } finally {
      verifier.close();
    }
  });

  it('are refused plan_inactive after a move to the free plan', async () => {
    clock = Date.now();
    const id = await account('hobby', FAR_FUTURE);
    const key = await issueKey(rules, id, { kind: 'live', client: 'mobile' });
    await setSubscription(db, id, resolvePlanChange(TEST_CATALOGUE, 'free', undefined));
    const reply = await ask(key.key);
    expect(errorCode(reply)).toBe('plan_inactive');
    expect(reply.ok === false && reply.error.message).toBe(
      'api_key is a Live key, which needs an active paid plan, and the account is on the Free plan: move to Hobby or Startup, or use the Test key',
    );
  });

  it('are several per account, up to MAX_LIVE_KEYS_PER_ACCOUNT unrevoked ones', async () => {
    clock = Date.now();
    const id = await account('hobby', FAR_FUTURE);
    const keys = [];
    for (let i = 0; i < rules.maxLiveKeys; i++) {
      keys.push(await issueKey(rules, id, { kind: 'live', client: 'mobile' }));
    }
    for (const k of keys) expect(errorCode(await ask(k.key))).toBe('ok');
    const over = await refusal(issueKey(rules, id, { kind: 'live', client: 'mobile' }));
    expect(over).toMatchObject({ code: 'too_many_keys', status: 409 });
    expect(over.message).toMatch(/the most allowed \(3\): revoke one/);
    // Rotation: create new after revoking old leaves no gap in service for the other keys.
    await revokeApiKey(db, keys[0]?.id ?? '');
    const rotated = await issueKey(rules, id, { kind: 'live', client: 'mobile' });
    expect(errorCode(await ask(rotated.key))).toBe('ok');
    expect(errorCode(await ask(keys[0]?.key ?? ''))).toBe('key_revoked');
  });
});

describe('Live key cap under parallel creations', () => {
  it('lets exactly MAX_LIVE_KEYS_PER_ACCOUNT of 12 parallel creations through', async () => {
    const id = await account('hobby', FAR_FUTURE);
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, () => issueKey(rules, id, { kind: 'live', client: 'mobile' })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(rules.maxLiveKeys);
    for (const r of results.filter((r) => r.status === 'rejected')) {
      expect(r.reason).toMatchObject({ code: 'too_many_keys', status: 409, field: 'kind' });
    }
    const live = await db
      .selectFrom('api_keys')
      .select(db.fn.countAll<string>().as('n'))
      .where('account_id', '=', id)
      .where('kind', '=', 'live')
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    expect(Number(live.n)).toBe(rules.maxLiveKeys);
  });
});

describe('account set-plan', () => {
  it('refuses unknown plans (listing the valid ones), a paid plan without --until, and bad dates', async () => {
    const id = await account();
    const cases: [string[], RegExp][] = [
      [
        ['--plan', 'gold', '--until', '2099-01-01'],
        /--plan: plan "gold" is not in the plan catalogue: use one of free, hobby, startup/,
      ],
      [['--plan', 'hobby'], /--until: until is required for the paid hobby plan/],
      [['--plan', 'free', '--until', '2099-01-01'], /--until: until is only for paid plans/],
      [['--plan', 'hobby', '--until', 'next month'], /--until: until "next month" is not a date/],
      [
        ['--plan', 'hobby', '--until', '2099-02-30'],
        /--until: until "2099-02-30" is not a real date/,
      ],
      [
        ['--plan', 'hobby', '--until', '2099-01-01T10:00:00'],
        /--until: .* is not a date: give a date .* with its zone/,
      ],
    ];
    for (const [flags, message] of cases) {
      const run = await admin('account', 'set-plan', '--account', id, ...flags);
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stdout).toBe('');
    }
    const missing = await admin('account', 'set-plan', '--account', id);
    expect(missing.stderr).toMatch(/--plan is required/);
    const unknown = await admin(
      'account',
      'set-plan',
      '--account',
      '6b1c3a4e-1111-4111-8111-111111111111',
      '--plan',
      'free',
    );
    expect(unknown.stderr).toMatch(/--account: account .* does not exist/);
    const sub = await db
      .selectFrom('subscriptions')
      .selectAll()
      .where('account_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(sub).toMatchObject({ plan: 'free', period_end: null });
  });

  it('takes a date-time with an offset and stores it as that instant', async () => {
    const id = await account();
    const run = await admin(
      'account',
      'set-plan',
      '--account',
      id,
      '--plan',
      'startup',
      '--until',
      '2099-03-01T12:30:00+03:00',
      '--json',
    );
    expect(JSON.parse(run.stdout)).toMatchObject({ period_end: '2099-03-01T09:30:00.000Z' });
  });

  it('fails with exit 1 and a clear message when the catalogue is invalid', async () => {
    const bad = writeCatalogue({ plans: [], test_key_limits: {} });
    const run = await inProcessAdmin(
      ['account', 'set-plan', '--account', await account(), '--plan', 'free'],
      {
        DATABASE_URL: servers.pg.url,
        PLANS_FILE: bad,
      },
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`plan catalogue ${bad} is invalid`);
    expect(run.stderr).toMatch(/plans: .*; test_key_limits\.connections: /);
  });
});

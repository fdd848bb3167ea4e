import { PUSH_AFTER_MS_MAX, PUSH_TTL_S_DEFAULT, PUSH_TTL_S_MAX } from '@herald/proto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts.js';
import { resolvePlanChange, setSubscription } from '../src/subscriptions.js';
import { type AccountApiStack, startAccountApi } from './account-api-fixture.js';
import { FAR_FUTURE, TEST_CATALOGUE } from './catalogue.js';
import { inProcessAdmin, type Run } from './cli.js';
import { natsOf } from './servers.js';

/** A key's push settings (issue 40, migration 0012): the CLI, the account API, the verify reply. */

let stack: AccountApiStack;

beforeAll(async () => {
  stack = await startAccountApi();
});
afterAll(() => stack?.stop());

const admin = (...argv: string[]) =>
  inProcessAdmin(argv, {
    DATABASE_URL: stack.servers.pg.url,
    ...natsOf(stack.servers).env('auth'),
  });

function json(run: Run): Record<string, unknown> {
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

async function paidAccount(email: string): Promise<string> {
  const account = await createAccount(
    stack.servers.db,
    { email },
    { plan: { id: 'startup' }, period_end: FAR_FUTURE },
  );
  return account.id;
}

const DEFAULTS = { ttl_s: PUSH_TTL_S_DEFAULT, title: null, body: null, include_payload: false };

describe('key create --push-after-ms (admin CLI)', () => {
  let accountId: string;
  const create = (...extra: string[]) =>
    admin(
      'key',
      'create',
      '--account',
      accountId,
      '--kind',
      'live',
      '--client',
      'mobile',
      ...extra,
    );

  beforeAll(async () => {
    accountId = await paidAccount('push-cli@example.com');
  });

  it('takes 0 and 3,600,000 ms, every setting at its edge, and shows them in the views and the verify reply', async () => {
    const zero = json(await create('--push-after-ms', '0', '--json'));
    expect(zero.push).toEqual({ after_ms: 0, ...DEFAULTS });
    const full = json(
      await create(
        '--push-after-ms',
        String(PUSH_AFTER_MS_MAX),
        '--push-ttl-s',
        '1',
        '--push-title',
        't'.repeat(200),
        '--push-body',
        'b'.repeat(1000),
        '--push-include-payload',
        '--json',
      ),
    );
    expect(full.push).toEqual({
      after_ms: 3_600_000,
      ttl_s: 1,
      title: 't'.repeat(200),
      body: 'b'.repeat(1000),
      include_payload: true,
    });
    const longest = json(
      await create('--push-after-ms', '5', '--push-ttl-s', String(PUSH_TTL_S_MAX), '--json'),
    );
    expect(longest.push).toMatchObject({ after_ms: 5, ttl_s: 2_419_200 });
    const plain = json(await create('--json'));
    expect(plain.push).toBeNull();

    expect(await stack.verify(String(zero.key))).toMatchObject({
      ok: true,
      key: { push: { after_ms: 0, ttl_s: 86_400, include_payload: false } },
    });
    const fullKey = await stack.verify(String(full.key));
    expect(fullKey.ok && fullKey.key.push).toEqual({
      after_ms: 3_600_000,
      ttl_s: 1,
      title: 't'.repeat(200),
      body: 'b'.repeat(1000),
      include_payload: true,
    });
    // No template: no title or body at all (ingress falls back to the default title).
    const zeroKey = await stack.verify(String(zero.key));
    expect(zeroKey.ok && Object.keys(zeroKey.key.push ?? {}).sort()).toEqual([
      'after_ms',
      'include_payload',
      'ttl_s',
    ]);
    const plainKey = await stack.verify(String(plain.key));
    expect(plainKey.ok && 'push' in plainKey.key).toBe(false);

    const listed = json(await admin('key', 'list', '--account', accountId, '--json')) as {
      keys: Array<{ id: string; push: unknown }>;
    };
    expect(listed.keys.find((k) => k.id === zero.id)?.push).toEqual(zero.push);
    expect(listed.keys.find((k) => k.id === full.id)?.push).toEqual(full.push);
    expect(listed.keys.find((k) => k.id === plain.id)?.push).toBeNull();
    const text = (await admin('key', 'list', '--account', accountId)).stdout;
    expect(text.match(/push after \d+ ms/g)?.sort()).toEqual(
      ['push after 0 ms', 'push after 3600000 ms', 'push after 5 ms'].sort(),
    );
  });

  it('prints what a push key does', async () => {
    const run = await create('--push-after-ms', '5000', '--push-title', 'Hi');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(
      /push: {4}events no socket proved within 5000 ms are pushed \(TTL 86400 s, title "Hi"\)/,
    );
    const untitled = await create('--push-after-ms', '0');
    expect(untitled.stdout).toMatch(/title default "New notification"/);
  });

  it('refuses values past each edge, naming the flag, and writes no key', async () => {
    const before = await countKeys(accountId);
    const cases: [string[], RegExp][] = [
      [['--push-after-ms=-1'], /^admin: --push-after-ms: push_after_ms must be at least 0/],
      [
        ['--push-after-ms', '3600001'],
        /^admin: --push-after-ms: push_after_ms must be at most 3600000/,
      ],
      [['--push-after-ms', '1.5'], /^admin: --push-after-ms: push_after_ms must be a whole number/],
      [
        ['--push-after-ms', 'soon'],
        /^admin: --push-after-ms: push_after_ms must be a whole number/,
      ],
      [
        ['--push-after-ms', '0', '--push-ttl-s', '0'],
        /^admin: --push-ttl-s: push_ttl_s must be at least 1/,
      ],
      [
        ['--push-after-ms', '0', '--push-ttl-s', '2419201'],
        /^admin: --push-ttl-s: push_ttl_s must be at most 2419200/,
      ],
      [
        ['--push-after-ms', '0', '--push-title='],
        /^admin: --push-title: push_title must not be empty/,
      ],
      [
        ['--push-after-ms', '0', '--push-title', 't'.repeat(201)],
        /^admin: --push-title: push_title must be at most 200 characters/,
      ],
      [
        ['--push-after-ms', '0', '--push-body', 'b'.repeat(1001)],
        /^admin: --push-body: push_body must be at most 1000 characters/,
      ],
      // The other push flags mean nothing without the delay: refused rather than ignored.
      [
        ['--push-ttl-s', '60'],
        /^admin: --push-ttl-s: push_ttl_s only applies to a key that pushes: give push_after_ms too/,
      ],
      [
        ['--push-title', 'Hi'],
        /^admin: --push-title: push_title only applies to a key that pushes/,
      ],
      [['--push-body', 'Hi'], /^admin: --push-body: push_body only applies to a key that pushes/],
      [
        ['--push-include-payload'],
        /^admin: --push-include-payload: push_include_payload only applies to a key that pushes/,
      ],
      [
        ['--push-after-ms', '0', '--scope', 'subscribe'],
        /^admin: --push-after-ms: push_after_ms is for keys that send events/,
      ],
      // A flag of `push configure`, not of `key create`: named as such.
      [
        ['--push-after-ms', '0', '--fcm-service-account', 'sa.json'],
        /--fcm-service-account is not a flag of `key create`/,
      ],
    ];
    for (const [extra, message] of cases) {
      const run = await create(...extra);
      expect({ extra, status: run.status }).toEqual({ extra, status: 2 });
      expect(run.stderr).toMatch(message);
    }
    expect(await countKeys(accountId)).toBe(before);
  });

  it('keeps the settings through a Test key reset', async () => {
    const free = (await createAccount(stack.servers.db, { email: 'push-reset@example.com' })).id;
    const created = json(
      await admin(
        'key',
        'create',
        '--account',
        free,
        '--kind',
        'test',
        '--client',
        'mobile',
        '--push-after-ms',
        '250',
        '--push-title',
        'Hello',
        '--json',
      ),
    );
    const reset = json(await admin('key', 'reset-test', '--account', free, '--json'));
    expect(reset.id).not.toBe(created.id);
    expect(reset.push).toEqual({ after_ms: 250, ...DEFAULTS, title: 'Hello' });
  });

  it('lists the push flags in --help', async () => {
    const help = await admin('--help');
    expect(help.stdout).toMatch(/key create .*\[--push-after-ms N \(0-3600000: .*\[--push-ttl-s S/);
  });
});

describe('push settings in the account API', () => {
  it('takes them on key create with the edges, refuses past them naming the field, and lists them', async () => {
    const user = await stack.newUser();
    await setSubscription(
      stack.servers.db,
      user.accountId,
      resolvePlanChange(TEST_CATALOGUE, 'hobby', FAR_FUTURE),
    );
    const create = (body: Record<string, unknown>) =>
      stack.call('POST', '/v1/keys', {
        body: { client: 'mobile', ...body },
        headers: stack.as(user),
      });
    const refusals: [Record<string, unknown>, string, RegExp][] = [
      [{ push_after_ms: -1 }, 'push_after_ms', /at least 0/],
      [{ push_after_ms: 3_600_001 }, 'push_after_ms', /at most 3600000/],
      [{ push_after_ms: 1.5 }, 'push_after_ms', /whole number/],
      [{ push_after_ms: '5000' }, 'push_after_ms', /whole number of milliseconds/],
      [{ push_after_ms: 0, push_ttl_s: 0 }, 'push_ttl_s', /at least 1/],
      [{ push_after_ms: 0, push_ttl_s: 2_419_201 }, 'push_ttl_s', /at most 2419200/],
      [{ push_after_ms: 0, push_title: '' }, 'push_title', /must not be empty/],
      [{ push_after_ms: 0, push_title: 'x'.repeat(201) }, 'push_title', /at most 200/],
      [{ push_after_ms: 0, push_body: 'x'.repeat(1001) }, 'push_body', /at most 1000/],
      [{ push_after_ms: 0, push_include_payload: 'yes' }, 'push_include_payload', /true or false/],
      [{ push_ttl_s: 60 }, 'push_ttl_s', /only applies to a key that pushes/],
      [
        { push_include_payload: false },
        'push_include_payload',
        /only applies to a key that pushes/,
      ],
      [{ push_after_ms: 0, scope: 'subscribe' }, 'push_after_ms', /keys that send events/],
    ];
    for (const [body, field, message] of refusals) {
      const res = await create(body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.error).toMatchObject({ code: 'invalid_field', field });
      expect(res.body.error.message).toMatch(message);
    }
    expect(await countKeys(user.accountId)).toBe(0);

    const zero = await create({ push_after_ms: 0 });
    expect(zero.status).toBe(201);
    expect(zero.body.push).toEqual({ after_ms: 0, ...DEFAULTS });
    const full = await create({
      push_after_ms: 3_600_000,
      push_ttl_s: 2_419_200,
      push_title: 'x'.repeat(200),
      push_body: 'y'.repeat(1000),
      push_include_payload: true,
    });
    expect(full.status).toBe(201);
    const fullPush = {
      after_ms: 3_600_000,
      ttl_s: 2_419_200,
      title: 'x'.repeat(200),
      body: 'y'.repeat(1000),
      include_payload: true,
    };
    expect(full.body.push).toEqual(fullPush);
    const plain = await create({});
    expect(plain.body.push).toBeNull();

    const listed = await stack.call('GET', '/v1/keys', { headers: { cookie: user.cookie } });
    const byId = new Map(
      listed.body.keys.map((k: { id: string; push: unknown }) => [k.id, k.push]),
    );
    expect(byId.get(zero.body.id)).toEqual(zero.body.push);
    expect(byId.get(full.body.id)).toEqual(fullPush);
    expect(byId.get(plain.body.id)).toBeNull();

    const verified = await stack.verify(full.body.key);
    expect(verified.ok && verified.key.push).toEqual(fullPush);
    const unpushed = await stack.verify(plain.body.key);
    expect(unpushed.ok && 'push' in unpushed.key).toBe(false);

    // The Test key takes the same fields.
    const test = await stack.call('POST', '/v1/keys/test', {
      body: { client: 'mobile', push_after_ms: 1000, push_body: '' },
      headers: stack.as(user),
    });
    expect(test.status).toBe(201);
    expect(test.body.push).toEqual({ after_ms: 1000, ...DEFAULTS, body: '' });
  });
});

describe('migration 0012', () => {
  it('refuses a row with push settings but no delay, or a delay past the bound', async () => {
    const accountId = await paidAccount('push-db@example.com');
    const created = json(
      await admin(
        'key',
        'create',
        '--account',
        accountId,
        '--kind',
        'live',
        '--client',
        'mobile',
        '--json',
      ),
    );
    const db = stack.servers.db;
    await expect(
      sql`update api_keys set push_ttl_s = 60 where id = ${String(created.id)}`.execute(db),
    ).rejects.toThrow(/api_keys_push_check/);
    await expect(
      sql`update api_keys set push_after_ms = 3600001, push_ttl_s = 60, push_include_payload = false
        where id = ${String(created.id)}`.execute(db),
    ).rejects.toThrow(/push_after_ms_check/);
  });
});

async function countKeys(accountId: string): Promise<number> {
  const row = await stack.servers.db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

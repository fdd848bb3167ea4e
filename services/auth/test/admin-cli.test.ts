import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { hashKey } from '@herald/access';
import { AuthInvalidate, subjects } from '@herald/proto';
import { freePort } from '@herald/testkit';
import { sql } from 'kysely';
import { connect, JSONCodec, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts.js';
import { runAdmin } from '../src/admin/cli.js';
import { createApiKey } from '../src/keys/store.js';
import { natsOf, type Servers, startServers } from './servers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

let servers: Servers;

beforeAll(async () => {
  servers = await startServers({ nats: true });
});
afterAll(() => servers?.stop());

interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI exactly as `npm run -s admin --` does, against this file's private servers. */
function admin(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=herald-source', '--import', 'tsx', 'services/auth/src/admin.ts', ...args],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: servers.pg.url,
          ...natsOf(servers).env('auth'),
        },
      },
      (err, stdout, stderr) => {
        const status = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ status, stdout, stderr });
      },
    );
  });
}

/** The one JSON object a --json run printed (fails if stdout holds anything else). */
function json(run: Run): Record<string, unknown> {
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  const lines = run.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] ?? '') as Record<string, unknown>;
}

/**
 * A test of the CLI as a child process: each run is a fresh `node --import tsx` that transpiles
 * the CLI's imports before it runs, 6 to 8 s a run on the 2-core CI machine under the suite's load
 * (measured). The most runs in one test is 4; the default 30 s allows 4 of 7.5 s and nothing else.
 */
const CHILD_TEST_TIMEOUT_MS = 120_000;

describe('admin CLI', { timeout: CHILD_TEST_TIMEOUT_MS }, () => {
  it('creates an account and keys, lists them without secrets, and revokes with a broadcast', async () => {
    const account = json(
      await admin(
        'account',
        'create',
        '--email',
        'CLI@Example.com',
        '--plan',
        'hobby',
        '--until',
        '2099-01-01',
        '--json',
      ),
    );
    expect(account).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email: 'cli@example.com',
      plan: 'hobby',
      period_end: '2099-01-01T00:00:00.000Z',
    });
    const accountId = String(account.id);

    const created = json(
      await admin(
        'key',
        'create',
        '--account',
        accountId,
        '--kind',
        'test',
        '--client',
        'web',
        '--domain',
        'https://App.Example.com/',
        '--json',
      ),
    );
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      key: expect.stringMatching(/^hk_test_[0-9A-Za-z]{43}$/),
      name: null,
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
      token_warning: expect.stringMatching(
        /^No recipient tokens: anyone holding this public web key/,
      ),
    });
    const key = String(created.key);
    const row = await servers.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', String(created.id))
      .executeTakeFirstOrThrow();
    expect(row.key_hash).toBe(hashKey(key));
    expect(row.expires_at?.getTime()).toBe(row.created_at.getTime() + 4 * 3600_000);
    expect(Date.parse(String(created.expires_at))).toBe(row.expires_at?.getTime());

    const listRun = await admin('key', 'list', '--account', accountId, '--json');
    expect(listRun.stdout).not.toContain(key);
    expect(listRun.stdout).not.toContain(key.slice(12));
    expect(listRun.stdout).not.toContain(row.key_hash);
    expect(json(listRun)).toEqual({
      keys: [
        {
          id: created.id,
          name: null,
          key_prefix: key.slice(0, 12),
          kind: 'test',
          client: 'web',
          domain: 'https://app.example.com',
          expires_at: created.expires_at,
          revoked_at: null,
          created_at: row.created_at.toISOString(),
          scope: 'both',
          require_token: false,
          inbox_days: null,
          allow_unsigned_recipients: false,
          webhook_payload: false,
          push: null,
          token_warning: created.token_warning,
        },
      ],
    });
    const text = await inProcess(['key', 'list', '--account', accountId]);
    expect(text.status).toBe(0);
    expect(text.stdout).toContain(key.slice(0, 12));
    expect(text.stdout).not.toContain(key);

    let revoked: Record<string, unknown> = {};
    const nc: NatsConnection = await connect(natsOf(servers).connectOptions());
    try {
      const received: AuthInvalidate[] = [];
      const codec = JSONCodec();
      nc.subscribe(subjects.authInvalidate, {
        callback: (_err, msg) => received.push(AuthInvalidate.parse(codec.decode(msg.data))),
      });
      await nc.flush();
      revoked = json(await admin('key', 'revoke', '--key', String(created.id), '--json'));
      expect(revoked).toEqual({
        id: created.id,
        account_id: accountId,
        revoked_at: expect.any(String),
        broadcast: true,
      });
      await nc.flush();
      expect(received).toEqual([
        { v: 1, key_id: created.id, account_id: accountId, reason: 'revoked' },
      ]);
    } finally {
      await nc.close();
    }
    const after = await servers.db
      .selectFrom('api_keys')
      .select('revoked_at')
      .where('id', '=', String(created.id))
      .executeTakeFirstOrThrow();
    expect(after.revoked_at?.toISOString()).toBe(revoked.revoked_at);
  });

  it('prints the key once in its human-readable output too', async () => {
    // On a paid plan, since Live keys need one (plan rules: key-lifecycle.test.ts).
    const accountId = (
      await createAccount(
        servers.db,
        { email: 'text@example.com' },
        { plan: { id: 'startup' }, period_end: new Date('2099-01-01T00:00:00Z') },
      )
    ).id;
    const run = await admin(
      'key',
      'create',
      '--account',
      accountId,
      '--kind',
      'live',
      '--client',
      'mobile',
    );
    expect(run.status).toBe(0);
    const key = /hk_live_[0-9A-Za-z]{43}/.exec(run.stdout)?.[0] ?? '';
    expect(key).not.toBe('');
    expect(run.stdout).toMatch(/shown only now/);
    const stored = await sql<{
      n: number;
    }>`select count(*)::int as n from api_keys where key_hash = ${hashKey(key)}`.execute(
      servers.db,
    );
    expect(stored.rows[0]?.n).toBe(1);
  });

  it('refuses a Live key on the free plan saying why once, with the plan and the fix', async () => {
    const accountId = (await createAccount(servers.db, { email: 'free-live@example.com' })).id;
    const run = await admin(
      'key',
      'create',
      '--account',
      accountId,
      '--kind',
      'live',
      '--client',
      'mobile',
    );
    // The flag at fault is --kind: a bad argument (2).
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    // The plan named as the README and the CLI's own --plan name it (config/plans.json).
    expect(run.stderr).toBe(
      'admin: --kind: Live keys need an active paid plan, and the account is on the Free plan: move to Hobby or Startup, or use the Test key\n',
    );
    expect(run.stderr.match(/paid plan/g)).toHaveLength(1);
  });

  it('exits 2 naming the flag and the fix on bad arguments', async () => {
    const noDomain = await admin(
      'key',
      'create',
      '--account',
      '6b1c3a4e-1111-4111-8111-111111111111',
      '--kind',
      'live',
      '--client',
      'web',
      '--json',
    );
    expect(noDomain.status).toBe(2);
    expect(noDomain.stdout).toBe('');
    expect(noDomain.stderr).toMatch(/--domain.*required.*https:\/\//);
  });
});

/** Runs the CLI's code in this process: for cases where the child process adds nothing. */
async function inProcess(
  argv: string[],
  env: Record<string, string | undefined> = {},
): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const status = await runAdmin(argv, {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env: { DATABASE_URL: servers.pg.url, ...natsOf(servers).env('auth'), ...env },
  });
  return { status, stdout, stderr };
}

describe('runAdmin (in process, same code path as the CLI)', () => {
  it('migrates: nothing to do on a migrated database', async () => {
    expect(json(await inProcess(['migrate', '--json']))).toEqual({ applied: [] });
    expect((await inProcess(['migrate'])).stdout).toMatch(/up to date/);
  });

  it('creates an inbox key with --inbox-days (1 and 365 at the edges) and lists each key with its mode', async () => {
    const accountId = (
      await createAccount(
        servers.db,
        { email: 'inbox@example.com' },
        { plan: { id: 'startup' }, period_end: new Date('2099-01-01T00:00:00Z') },
      )
    ).id;
    const create = (...extra: string[]) =>
      inProcess([
        'key',
        'create',
        '--account',
        accountId,
        '--kind',
        'live',
        '--client',
        'mobile',
        ...extra,
      ]);
    expect(json(await create('--inbox-days', '1', '--json')).inbox_days).toBe(1);
    expect(json(await create('--inbox-days', '365', '--json')).inbox_days).toBe(365);
    expect(json(await create('--json')).inbox_days).toBe(null);
    const text = await create('--inbox-days', '30');
    expect(text.stdout).toMatch(/mode: {4}inbox, 30 days/);
    const list = await inProcess(['key', 'list', '--account', accountId]);
    expect(list.stdout.match(/inbox, 1 days|inbox, 365 days|inbox, 30 days/g)).toHaveLength(3);
    expect(list.stdout).toMatch(/default: live events not stored/);
    const listed = json(await inProcess(['key', 'list', '--account', accountId, '--json'])) as {
      keys: Array<{ inbox_days: number | null }>;
    };
    expect(listed.keys.map((k) => k.inbox_days).sort()).toEqual([1, 30, 365, null].sort());
  });

  it('creates a key with --webhook-payload, prints and lists the opt-in, refuses it on a subscribe key', async () => {
    const accountId = (
      await createAccount(
        servers.db,
        { email: 'webhook-payload@example.com' },
        { plan: { id: 'startup' }, period_end: new Date('2099-01-01T00:00:00Z') },
      )
    ).id;
    const create = (...extra: string[]) =>
      inProcess([
        'key',
        'create',
        '--account',
        accountId,
        '--kind',
        'live',
        '--client',
        'mobile',
        ...extra,
      ]);
    const flagged = json(await create('--webhook-payload', '--json'));
    expect(flagged.webhook_payload).toBe(true);
    expect(json(await create('--json')).webhook_payload).toBe(false);
    const text = await create('--webhook-payload');
    expect(text.stdout).toMatch(
      /webhook: its events' payloads go into the account's webhook bodies/,
    );
    const refused = await create('--webhook-payload', '--scope', 'subscribe');
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/--webhook-payload: webhook_payload is for keys that send/);
    const list = await inProcess(['key', 'list', '--account', accountId]);
    expect(list.stdout.match(/payload in webhooks/g)).toHaveLength(2);
    const listed = json(await inProcess(['key', 'list', '--account', accountId, '--json'])) as {
      keys: Array<{ id: string; webhook_payload: boolean }>;
    };
    expect(listed.keys.filter((k) => k.webhook_payload)).toHaveLength(2);
    expect(listed.keys.find((k) => k.id === flagged.id)?.webhook_payload).toBe(true);
  });

  it('names the flag when a value is refused', async () => {
    const ACCT = '6b1c3a4e-1111-4111-8111-111111111111';
    const cases: [string[], RegExp][] = [
      [['key', 'list', '--acount', 'x'], /unknown flag --acount.*--help/],
      [
        ['key', 'revoke', '--key', 'hk_live_abc', '--json'],
        /--key: key must be a UUID.*not the key itself/,
      ],
      [
        ['key', 'list', '--account', '6b1c3a4e-1111-4111-8111-111111111111'],
        /--account: account 6b1c3a4e-1111-4111-8111-111111111111 does not exist/,
      ],
      [
        ['account', 'create', '--email', 'x@example.com', '--plan', 'Gold!'],
        /--plan: plan "Gold!" is not in the plan catalogue: use one of free, hobby, startup/,
      ],
      [
        [
          'key',
          'create',
          '--account',
          '6b1c3a4e-1111-4111-8111-111111111111',
          '--kind',
          'test',
          '--client',
          'mobile',
          '--domain',
          'https://a.example',
        ],
        /--domain: domain is only for web keys/,
      ],
      [
        [
          'key',
          'create',
          '--account',
          ACCT,
          '--kind',
          'test',
          '--client',
          'mobile',
          '--scope',
          'all',
        ],
        /--scope: scope must be "subscribe".*"dispatch".*"both"/,
      ],
      [
        [
          'key',
          'create',
          '--account',
          ACCT,
          '--kind',
          'test',
          '--client',
          'mobile',
          '--scope',
          'dispatch',
          '--require-token',
        ],
        /--require-token: require_token is for keys that open sockets/,
      ],
      // No SECRET_ENCRYPTION_KEY in this environment: a signing secret could not be sealed.
      [
        [
          'key',
          'create',
          '--account',
          ACCT,
          '--kind',
          'test',
          '--client',
          'mobile',
          '--require-token',
        ],
        /--require-token: .*SECRET_ENCRYPTION_KEY.*openssl rand -base64 32/,
      ],
      ...['0', '366', '7.5', 'week'].map((days): [string[], RegExp] => [
        [
          'key',
          'create',
          '--account',
          ACCT,
          '--kind',
          'test',
          '--client',
          'mobile',
          '--inbox-days',
          days,
        ],
        /--inbox-days: must be a whole number of days from 1 to 365/,
      ]),
    ];
    for (const [argv, message] of cases) {
      const run = await inProcess(argv);
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stdout).toBe('');
    }
  });

  it('exits 1 with the broadcast failure when NATS is unreachable, the key revoked all the same', async () => {
    const account = await createAccount(servers.db, { email: 'nonats@example.com' });
    const key = await createApiKey(servers.db, account.id, { kind: 'live', client: 'mobile' });
    const run = await inProcess(['key', 'revoke', '--key', key.id, '--json'], {
      NATS_URL: `nats://127.0.0.1:${await freePort()}`,
    });
    expect(run.status).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ id: key.id, broadcast: false });
    expect(run.stderr).toMatch(
      /revoked in the database, but broadcasting it on NATS failed.*key revoke --key/,
    );
    const row = await servers.db
      .selectFrom('api_keys')
      .select('revoked_at')
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    expect(row.revoked_at).toBeInstanceOf(Date);
  });

  it('exits 1 naming DATABASE_URL when it is invalid', async () => {
    const run = await inProcess(['migrate'], { DATABASE_URL: 'mysql://db/herald' });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/DATABASE_URL must be a Postgres URL/);
  });
});

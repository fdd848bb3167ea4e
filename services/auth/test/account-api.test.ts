import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashKey } from '@herald/access';
import { closeServer, createLogger, createServer, listen } from '@herald/kit';
import { AuthInvalidate, AuthVerifyReply, subjects } from '@herald/proto';
import { makeCerts, type TestCerts } from '@herald/testkit';
import { type Kysely, sql } from 'kysely';
import { connect, JSONCodec, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts.js';
import { loadConfig } from '../src/config.js';
import type { AuthDb } from '../src/db-schema.js';
import { type AuthService, createAuthService } from '../src/index.js';
import { resolvePlanChange, setSubscription } from '../src/subscriptions.js';
import { FAR_FUTURE, TEST_CATALOGUE } from './catalogue.js';
import { natsOf, type Servers, startServers } from './servers.js';

const logger = createLogger('auth-test', 'silent');
const codec = JSONCodec();
const DASHBOARD = 'https://dashboard.example.com';
const SESSION_TTL_MS = 3600_000;
const PASSWORD = 'correct horse battery';

let servers: Servers;
let db: Kysely<AuthDb>;
let certs: TestCerts;
let authNc: NatsConnection;
let callerNc: NatsConnection;
let service: AuthService;
let server: ReturnType<typeof createServer>;
let port: number;
/** The service's clock, moved by tests for session expiry and login windows. */
let clock = Date.now();
const broadcasts: AuthInvalidate[] = [];

beforeAll(async () => {
  [servers, certs] = await Promise.all([startServers({ nats: true }), makeCerts()]);
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
    ...nats.env('auth'),
    TLS_CERT_FILE: certs.certFile,
    TLS_KEY_FILE: certs.keyFile,
    ACCOUNT_API_ORIGIN: DASHBOARD,
    SESSION_TTL_MS: String(SESSION_TTL_MS),
    // The cheapest cost allowed keeps the suite fast; the format carries it (see below).
    PASSWORD_SCRYPT_LOG_N: '10',
    LOGIN_MAX_FAILURES: '3',
    LOGIN_WINDOW_MS: '60000',
    ACCOUNT_API_BODY_LIMIT_BYTES: '1024',
  });
  service = createAuthService(config, {
    nc: authNc,
    db,
    logger,
    catalogue: TEST_CATALOGUE,
    now: () => clock,
  });
  server = createServer(config, service.handler);
  port = await listen(server, 0, '127.0.0.1');
  await Promise.all([authNc.flush(), callerNc.flush()]);
});

afterAll(async () => {
  if (server) await closeServer(server);
  await service?.close();
  await Promise.all([authNc?.close(), callerNc?.close()]);
  await servers?.stop();
});

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: the assertions themselves check each body's shape
  body: any;
}

/** One HTTPS request to the auth listener; `body` is sent as JSON unless it is a string. */
function call(
  method: string,
  path: string,
  opts: { body?: unknown; headers?: Record<string, string>; port?: number } = {},
): Promise<Reply> {
  const payload =
    opts.body === undefined
      ? undefined
      : typeof opts.body === 'string'
        ? opts.body
        : JSON.stringify(opts.body);
  const headers: Record<string, string> = {
    ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
    ...opts.headers,
  };
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: opts.port ?? port,
        path,
        method,
        headers,
        ca: certs.ca,
        servername: 'localhost',
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = text === '' ? undefined : JSON.parse(text);
          } catch {
            // Not JSON: keep the text.
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

interface Login {
  cookie: string;
  csrf: string;
  accountId: string;
  setCookie: string;
}

async function signup(email: string, password = PASSWORD): Promise<string> {
  const res = await call('POST', '/v1/accounts', { body: { email, password } });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function login(email: string, password = PASSWORD): Promise<Login> {
  const res = await call('POST', '/v1/sessions', { body: { email, password } });
  expect(res.status).toBe(201);
  const setCookie = String(res.headers['set-cookie']?.[0] ?? '');
  return {
    cookie: setCookie.split(';')[0] ?? '',
    csrf: res.body.csrf,
    accountId: res.body.account_id,
    setCookie,
  };
}

/** A request as the dashboard sends it: session cookie, CSRF header, its Origin. */
function as(session: Login, extra: Record<string, string> = {}): Record<string, string> {
  return { cookie: session.cookie, 'x-herald-csrf': session.csrf, origin: DASHBOARD, ...extra };
}

async function newUser(): Promise<Login & { email: string }> {
  const email = `api-${crypto.randomUUID()}@example.com`;
  await signup(email);
  return { ...(await login(email)), email };
}

async function verify(key: string): Promise<AuthVerifyReply> {
  const msg = await callerNc.request(
    subjects.authVerify,
    codec.encode({ v: 1, key_hash: hashKey(key) }),
    { timeout: 2000 },
  );
  return AuthVerifyReply.parse(codec.decode(msg.data));
}

describe('signup', () => {
  it('creates an account on the free plan and stores only an scrypt hash of the password', async () => {
    const res = await call('POST', '/v1/accounts', {
      body: { email: ' New@Example.com ', password: PASSWORD },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email: 'new@example.com',
      plan: 'free',
      period_end: null,
      created_at: expect.any(String),
    });
    expect(res.headers['cache-control']).toBe('no-store');
    const row = await db
      .selectFrom('accounts')
      .select('password_hash')
      .where('id', '=', res.body.id)
      .executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^scrypt\$10\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(row.password_hash).not.toContain(PASSWORD);
  });

  it('refuses a password under 12 characters, accepts exactly 12, and refuses a taken email with 409', async () => {
    const short = await call('POST', '/v1/accounts', {
      body: { email: 'short@example.com', password: 'x'.repeat(11) },
    });
    expect(short.status).toBe(400);
    expect(short.body.error).toMatchObject({
      code: 'invalid_field',
      field: 'password',
      message: expect.stringMatching(/at least 12 characters/),
    });
    await signup('twelve@example.com', 'x'.repeat(12));
    const taken = await call('POST', '/v1/accounts', {
      body: { email: 'TWELVE@example.com', password: PASSWORD },
    });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatchObject({ code: 'account_exists', field: 'email' });
  });

  it('names the field at fault for bad input', async () => {
    const cases: [unknown, number, string, string][] = [
      [{ password: PASSWORD }, 400, 'missing_field', 'email'],
      [{ email: 'not-an-address', password: PASSWORD }, 400, 'invalid_field', 'email'],
      [
        { email: 'a@example.com', password: PASSWORD, plan: 'startup' },
        400,
        'invalid_field',
        'plan',
      ],
      [[1, 2], 400, 'invalid_json', 'body'],
      ['{"email":', 400, 'invalid_json', 'body'],
    ];
    for (const [body, status, code, field] of cases) {
      const res = await call('POST', '/v1/accounts', { body });
      expect(res.status).toBe(status);
      expect(res.body.error).toMatchObject({ code, field });
    }
    const text = await call('POST', '/v1/accounts', {
      body: 'email=a',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(text.body.error).toMatchObject({ code: 'unsupported_content_type' });
    const big = await call('POST', '/v1/accounts', {
      body: { email: 'big@example.com', password: 'p'.repeat(2000) },
    });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('payload_too_large');
  });
});

describe('login and logout', () => {
  it('sets an httpOnly, Secure, SameSite=Strict session cookie and stores only hashes', async () => {
    const email = `cookie-${crypto.randomUUID()}@example.com`;
    const id = await signup(email);
    const session = await login(email);
    expect(session.accountId).toBe(id);
    const attrs = session.setCookie.split(';').map((a) => a.trim());
    expect(attrs[0]).toMatch(/^herald_session=[\w-]{43}$/);
    expect(attrs.slice(1).sort()).toEqual(
      ['HttpOnly', 'Max-Age=3600', 'Path=/', 'SameSite=Strict', 'Secure'].sort(),
    );
    expect(session.csrf).toMatch(/^[\w-]{43}$/);
    const token = session.cookie.split('=')[1] ?? '';
    const rows = await sql<Record<string, unknown>>`
      select * from sessions where account_id = ${id}`.execute(db);
    expect(rows.rows).toHaveLength(1);
    for (const value of Object.values(rows.rows[0] ?? {})) {
      expect(String(value)).not.toContain(token);
      expect(String(value)).not.toContain(session.csrf);
    }
  });

  it('gives the same 401 for a wrong password, an unknown email and a password-less account', async () => {
    const email = `wrong-${crypto.randomUUID()}@example.com`;
    await signup(email);
    const cliMade = await createAccount(db, { email: `cli-${crypto.randomUUID()}@example.com` });
    const wrong = await call('POST', '/v1/sessions', {
      body: { email, password: 'not the password' },
    });
    const unknown = await call('POST', '/v1/sessions', {
      body: { email: `nobody-${crypto.randomUUID()}@example.com`, password: PASSWORD },
    });
    const noPassword = await call('POST', '/v1/sessions', {
      body: { email: cliMade.email, password: PASSWORD },
    });
    for (const res of [wrong, unknown, noPassword]) {
      expect(res.status).toBe(401);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    expect(wrong.body).toEqual({
      error: {
        code: 'invalid_credentials',
        message:
          'email or password is wrong: check both, or create an account with POST /v1/accounts',
      },
    });
    expect(unknown.body).toEqual(wrong.body);
    expect(noPassword.body).toEqual(wrong.body);
  });

  it('refuses logins for an email and address after LOGIN_MAX_FAILURES failures, until the window ends', async () => {
    const email = `limit-${crypto.randomUUID()}@example.com`;
    await signup(email);
    for (let i = 0; i < 3; i++) {
      expect(
        (await call('POST', '/v1/sessions', { body: { email, password: 'nope' } })).status,
      ).toBe(401);
    }
    // Even the right password waits: the limit is on attempts, not on wrong answers only.
    const limited = await call('POST', '/v1/sessions', { body: { email, password: PASSWORD } });
    expect(limited.status).toBe(403);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    // Another email from the same address is unaffected.
    const other = await newUser();
    expect(other.csrf).toBeTruthy();

    const saved = clock;
    clock += 60_000;
    try {
      await login(email);
    } finally {
      clock = saved;
    }
  });

  it('logs out: the cookie is cleared and the session no longer opens anything', async () => {
    const user = await newUser();
    expect((await call('GET', '/v1/account', { headers: { cookie: user.cookie } })).status).toBe(
      200,
    );
    const out = await call('DELETE', '/v1/sessions/current', { headers: as(user) });
    expect(out.status).toBe(204);
    expect(String(out.headers['set-cookie']?.[0])).toMatch(/^herald_session=; Path=\/; Max-Age=0;/);
    const after = await call('GET', '/v1/account', { headers: { cookie: user.cookie } });
    expect(after.status).toBe(401);
    expect(after.body.error).toMatchObject({ code: 'not_authenticated', field: 'herald_session' });
    const left = await db
      .selectFrom('sessions')
      .select('id')
      .where('account_id', '=', user.accountId)
      .execute();
    expect(left).toEqual([]);
  });

  it('ends a session at SESSION_TTL_MS', async () => {
    const user = await newUser();
    const saved = clock;
    try {
      clock = saved + SESSION_TTL_MS - 1;
      expect((await call('GET', '/v1/keys', { headers: { cookie: user.cookie } })).status).toBe(
        200,
      );
      clock = saved + SESSION_TTL_MS;
      expect((await call('GET', '/v1/keys', { headers: { cookie: user.cookie } })).status).toBe(
        401,
      );
    } finally {
      clock = saved;
    }
  });
});

describe('CSRF protection', () => {
  it('refuses a state-changing request without the token, with a wrong one, or with another session’s', async () => {
    const user = await newUser();
    const other = await newUser();
    const body = { client: 'mobile' };
    const cases: Record<string, string>[] = [
      { cookie: user.cookie, origin: DASHBOARD },
      { cookie: user.cookie, origin: DASHBOARD, 'x-herald-csrf': 'guessed' },
      { cookie: user.cookie, origin: DASHBOARD, 'x-herald-csrf': other.csrf },
      { cookie: user.cookie, 'x-herald-csrf': '' },
    ];
    for (const headers of cases) {
      const res = await call('POST', '/v1/keys/test', { body, headers });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'csrf_failed', field: 'X-Herald-CSRF' });
    }
    expect(
      await db
        .selectFrom('api_keys')
        .select('id')
        .where('account_id', '=', user.accountId)
        .execute(),
    ).toEqual([]);
  });

  it('refuses another Origin even with the right token, and accepts the dashboard or no Origin', async () => {
    const user = await newUser();
    for (const origin of [
      'https://evil.example',
      'https://dashboard.example.com.evil.io',
      'http://dashboard.example.com',
      'https://dashboard.example.com:8443',
      'null',
    ]) {
      const res = await call('POST', '/v1/keys/test', {
        body: { client: 'mobile' },
        headers: as(user, { origin }),
      });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'csrf_failed', field: 'Origin' });
    }
    // Signup and login are state-changing too: another site cannot log a browser in.
    const crossLogin = await call('POST', '/v1/sessions', {
      body: { email: user.email, password: PASSWORD },
      headers: { origin: 'https://evil.example' },
    });
    expect(crossLogin.body.error?.code).toBe('csrf_failed');
    const ok = await call('POST', '/v1/keys/test', {
      body: { client: 'mobile' },
      headers: as(user),
    });
    expect(ok.status).toBe(201);
    const { origin: _origin, ...noOrigin } = as(user);
    const list = await call('DELETE', `/v1/keys/${ok.body.id}`, { headers: noOrigin });
    expect(list.status).toBe(200);
  });

  it('gives CORS access with credentials to the dashboard origin only', async () => {
    const preflight = await call('OPTIONS', '/v1/keys', {
      headers: { origin: DASHBOARD, 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': DASHBOARD,
      'access-control-allow-credentials': 'true',
      'access-control-allow-headers': 'Content-Type, X-Herald-CSRF',
    });
    const foreign = await call('GET', '/v1/account', {
      headers: { origin: 'https://evil.example' },
    });
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    expect(foreign.status).toBe(401);
  });
});

describe('CSRF protection with the dashboard served (DASHBOARD_DIR)', () => {
  // Found by an audit: the same-origin exemption compared Origin with koa's ctx.origin, which koa
  // 3 made the Origin header itself, so any site could sign up, log in and make keys.
  let dashService: AuthService;
  let dashServer: ReturnType<typeof createServer>;
  let dashPort: number;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'herald-dashboard-'));
    await writeFile(join(dir, 'index.html'), '<!doctype html><title>dashboard</title>');
    const config = loadConfig({
      DATABASE_URL: servers.pg.url,
      ...natsOf(servers).env('auth'),
      TLS_CERT_FILE: certs.certFile,
      TLS_KEY_FILE: certs.keyFile,
      ACCOUNT_API_ORIGIN: DASHBOARD,
      PASSWORD_SCRYPT_LOG_N: '10',
      DASHBOARD_DIR: dir,
    });
    dashService = createAuthService(config, { nc: authNc, db, logger, catalogue: TEST_CATALOGUE });
    dashServer = createServer(config, dashService.handler);
    dashPort = await listen(dashServer, 0, '127.0.0.1');
  });

  afterAll(async () => {
    if (dashServer) await closeServer(dashServer);
    await dashService?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The page's own origin as a browser names it: the Host node's client sends, over https. */
  const own = () => `https://127.0.0.1:${dashPort}`;
  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    call('POST', path, { body, headers, port: dashPort });

  /** Signs up and logs in through the dashboard's listener, as a page on `origin` would. */
  async function userFrom(origin: string): Promise<Login> {
    const email = `dash-${crypto.randomUUID()}@example.com`;
    expect((await post('/v1/accounts', { email, password: PASSWORD }, { origin })).status).toBe(
      201,
    );
    const res = await post('/v1/sessions', { email, password: PASSWORD }, { origin });
    expect(res.status).toBe(201);
    return {
      cookie: String(res.headers['set-cookie']?.[0] ?? '').split(';')[0] ?? '',
      csrf: res.body.csrf,
      accountId: res.body.account_id,
      setCookie: '',
    };
  }

  it('serves the dashboard', async () => {
    const page = await call('GET', '/', { port: dashPort });
    expect(page.status).toBe(200);
    expect(String(page.body)).toContain('<title>dashboard</title>');
  });

  it('refuses a foreign Origin on signup, login and key creation with 403 csrf_failed', async () => {
    const user = await userFrom(own());
    const email = `dash-${crypto.randomUUID()}@example.com`;
    for (const origin of [
      'https://evil.io',
      // Lookalikes of the page's own origin: another port, plain http, and a suffix.
      `https://127.0.0.1:${dashPort + 1}`,
      `http://127.0.0.1:${dashPort}`,
      `https://127.0.0.1:${dashPort}.evil.io`,
      'null',
    ]) {
      const refusals = [
        await post('/v1/accounts', { email, password: PASSWORD }, { origin }),
        await post('/v1/sessions', { email: 'x@example.com', password: PASSWORD }, { origin }),
        await post('/v1/keys/test', { client: 'mobile' }, as(user, { origin })),
      ];
      for (const res of refusals) {
        expect(res.status, origin).toBe(403);
        expect(res.body.error).toMatchObject({ code: 'csrf_failed', field: 'Origin' });
      }
    }
    expect(
      await db.selectFrom('accounts').select('id').where('email', '=', email).execute(),
    ).toEqual([]);
  });

  it('accepts the dashboard it serves and ACCOUNT_API_ORIGIN', async () => {
    for (const origin of [own(), DASHBOARD]) {
      const user = await userFrom(origin);
      const key = await post('/v1/keys/test', { client: 'mobile' }, as(user, { origin }));
      expect(key.status, origin).toBe(201);
    }
  });

  it('gives no same-origin pass where no dashboard is served', async () => {
    const res = await call('POST', '/v1/accounts', {
      body: { email: `own-${crypto.randomUUID()}@example.com`, password: PASSWORD },
      headers: { origin: `https://127.0.0.1:${port}` },
    });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'csrf_failed', field: 'Origin' });
  });
});

describe('keys through the account API', () => {
  it('generates the Test key once (409 after), shows it once, and stores only its hash', async () => {
    const user = await newUser();
    const created = await call('POST', '/v1/keys/test', {
      body: { client: 'web', domain: 'http://localhost:5173' },
      headers: as(user),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      key: expect.stringMatching(/^hk_test_[0-9A-Za-z]{43}$/),
      kind: 'test',
      client: 'web',
      domain: 'http://localhost:5173',
      revoked_at: null,
    });
    const key = created.body.key as string;
    expect(Date.parse(created.body.expires_at) - Date.parse(created.body.created_at)).toBe(
      4 * 3600_000,
    );

    const again = await call('POST', '/v1/keys/test', {
      body: { client: 'mobile' },
      headers: as(user),
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({
      code: 'test_key_exists',
      message: expect.stringMatching(/ask support to reset it/),
    });

    const list = await call('GET', '/v1/keys', { headers: { cookie: user.cookie } });
    expect(list.status).toBe(200);
    expect(list.body.keys).toHaveLength(1);
    expect(JSON.stringify(list.body)).not.toContain(key.slice(12));
    expect(list.body.keys[0]).toEqual({
      id: created.body.id,
      name: null,
      key_prefix: key.slice(0, 12),
      kind: 'test',
      client: 'web',
      domain: 'http://localhost:5173',
      expires_at: created.body.expires_at,
      revoked_at: null,
      created_at: created.body.created_at,
      scope: 'both',
      require_token: false,
      inbox_days: null,
      allow_unsigned_recipients: false,
      webhook_payload: false,
      push: null,
      token_warning: `No recipient tokens: anyone holding this public web key and a user's id can open that user's socket and receive their live events. Turn tokens on: \`key require-token --key ${created.body.id}\` (dashboard: Require tokens).`,
    });

    const rows = await sql<Record<string, unknown>>`
      select * from api_keys where account_id = ${user.accountId}`.execute(db);
    expect(rows.rows).toHaveLength(1);
    expect(rows.rows[0]?.key_hash).toBe(hashKey(key));
    for (const value of Object.values(rows.rows[0] ?? {})) {
      expect(String(value)).not.toContain(key.slice(12));
    }
  });

  it('refuses a Live key on the free plan and issues one on Hobby, web keys needing a domain', async () => {
    const user = await newUser();
    const free = await call('POST', '/v1/keys', { body: { client: 'mobile' }, headers: as(user) });
    expect(free.status).toBe(403);
    expect(free.body.error).toMatchObject({ code: 'plan_required', field: 'kind' });

    await setSubscription(
      db,
      user.accountId,
      resolvePlanChange(TEST_CATALOGUE, 'hobby', FAR_FUTURE),
    );
    const noDomain = await call('POST', '/v1/keys', { body: { client: 'web' }, headers: as(user) });
    expect(noDomain.status).toBe(400);
    expect(noDomain.body.error).toMatchObject({ code: 'missing_field', field: 'domain' });
    const asTest = await call('POST', '/v1/keys', {
      body: { kind: 'test', client: 'mobile' },
      headers: as(user),
    });
    expect(asTest.body.error).toMatchObject({ code: 'invalid_field', field: 'kind' });

    const live = await call('POST', '/v1/keys', {
      body: { client: 'web', domain: 'https://App.example.com' },
      headers: as(user),
    });
    expect(live.status).toBe(201);
    expect(live.body).toMatchObject({
      key: expect.stringMatching(/^hk_live_/),
      kind: 'live',
      domain: 'https://app.example.com',
      expires_at: null,
    });
    expect(await verify(live.body.key)).toMatchObject({ ok: true, key: { plan: 'hobby' } });

    // Inbox mode: the days are kept on the key, listed, and carried in the verify reply.
    const badDays = await call('POST', '/v1/keys', {
      body: { client: 'mobile', inbox_days: 366 },
      headers: as(user),
    });
    expect(badDays.status).toBe(400);
    expect(badDays.body.error).toMatchObject({ code: 'invalid_field', field: 'inbox_days' });
    const inbox = await call('POST', '/v1/keys', {
      body: { client: 'mobile', inbox_days: 30 },
      headers: as(user),
    });
    expect(inbox.status).toBe(201);
    expect(inbox.body.inbox_days).toBe(30);
    expect(await verify(inbox.body.key)).toMatchObject({ ok: true, key: { inbox_days: 30 } });
    expect(await verify(live.body.key)).toMatchObject({ ok: true, key: { inbox_days: null } });
    const listed = await call('GET', '/v1/keys', { headers: { cookie: user.cookie } });
    expect(
      listed.body.keys.map((k: { id: string; inbox_days: number | null }) => [k.id, k.inbox_days]),
    ).toEqual(
      expect.arrayContaining([
        [inbox.body.id, 30],
        [live.body.id, null],
      ]),
    );

    const account = await call('GET', '/v1/account', { headers: { cookie: user.cookie } });
    expect(account.body).toEqual({
      id: user.accountId,
      email: user.email,
      created_at: expect.any(String),
      plan: { id: 'hobby', name: 'Hobby', paid: true },
      status: 'active',
      period_end: FAR_FUTURE.toISOString(),
      limits: TEST_CATALOGUE.plans[1]?.limits,
      test_key_limits: TEST_CATALOGUE.test_key_limits,
      keys: { live: 2, test: 0 },
    });
  });

  it('keeps the webhook payload opt-in on a key, lists it and carries it in the verify reply', async () => {
    const user = await newUser();
    const bad = await call('POST', '/v1/keys/test', {
      body: { client: 'mobile', webhook_payload: 'yes' },
      headers: as(user),
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_field', field: 'webhook_payload' });
    const subscribeOnly = await call('POST', '/v1/keys/test', {
      body: { client: 'mobile', scope: 'subscribe', webhook_payload: true },
      headers: as(user),
    });
    expect(subscribeOnly.status).toBe(400);
    expect(subscribeOnly.body.error).toMatchObject({
      code: 'invalid_field',
      field: 'webhook_payload',
    });
    const flagged = await call('POST', '/v1/keys/test', {
      body: { client: 'mobile', webhook_payload: true },
      headers: as(user),
    });
    expect(flagged.status).toBe(201);
    expect(flagged.body.webhook_payload).toBe(true);
    expect(await verify(flagged.body.key)).toMatchObject({
      ok: true,
      key: { webhook_payload: true },
    });
    const listed = await call('GET', '/v1/keys', { headers: { cookie: user.cookie } });
    expect(listed.body.keys).toEqual([
      expect.objectContaining({ id: flagged.body.id, webhook_payload: true }),
    ]);

    await setSubscription(
      db,
      user.accountId,
      resolvePlanChange(TEST_CATALOGUE, 'hobby', FAR_FUTURE),
    );
    const plain = await call('POST', '/v1/keys', { body: { client: 'mobile' }, headers: as(user) });
    expect(plain.body.webhook_payload).toBe(false);
    expect(await verify(plain.body.key)).toMatchObject({
      ok: true,
      key: { webhook_payload: false },
    });
  });

  it('registers a new domain on a web key and broadcasts it', async () => {
    const user = await newUser();
    const key = await call('POST', '/v1/keys/test', {
      body: { client: 'web', domain: 'https://old.example.com' },
      headers: as(user),
    });
    broadcasts.length = 0;
    const moved = await call('PUT', `/v1/keys/${key.body.id}/domain`, {
      body: { domain: 'https://New.example.com:8443/' },
      headers: as(user),
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id: key.body.id, domain: 'https://new.example.com:8443' });
    await callerNc.flush();
    expect(broadcasts).toEqual([{ v: 1, key_id: key.body.id, reason: 'domain_changed' }]);
    expect(await verify(key.body.key)).toMatchObject({
      ok: true,
      key: { domain: 'https://new.example.com:8443' },
    });
    const bad = await call('PUT', `/v1/keys/${key.body.id}/domain`, {
      body: { domain: 'https://*.example.com' },
      headers: as(user),
    });
    expect(bad.body.error).toMatchObject({ code: 'invalid_field', field: 'domain' });
  });

  it('revokes a key of the session’s account only, and broadcasts the revocation', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const key = await call('POST', '/v1/keys/test', {
      body: { client: 'mobile' },
      headers: as(owner),
    });
    const foreign = await call('DELETE', `/v1/keys/${key.body.id}`, { headers: as(stranger) });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toMatchObject({ code: 'not_found', field: 'key' });
    expect(await verify(key.body.key)).toMatchObject({ ok: true });

    broadcasts.length = 0;
    const revoked = await call('DELETE', `/v1/keys/${key.body.id}`, { headers: as(owner) });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).toEqual(expect.any(String));
    await callerNc.flush();
    expect(broadcasts).toEqual([
      { v: 1, key_id: key.body.id, account_id: owner.accountId, reason: 'revoked' },
    ]);
    expect(await verify(key.body.key)).toMatchObject({ ok: false, error: { code: 'key_revoked' } });
  });
});

describe('the listener', () => {
  it('still serves the ops endpoints, and answers unknown routes and methods in JSON', async () => {
    expect((await call('GET', '/healthz')).status).toBe(200);
    const missing = await call('GET', '/v2/nothing');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
    const method = await call('PATCH', '/v1/account', { headers: { origin: DASHBOARD } });
    expect(method.status).toBe(405);
    expect(method.body.error).toMatchObject({ code: 'method_not_allowed' });
    expect(await service.registry.metrics()).toMatch(
      /herald_auth_logins_total\{[^}]*result="invalid_credentials"[^}]*\} [1-9]/,
    );
  });
});

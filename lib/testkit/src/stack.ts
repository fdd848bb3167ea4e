import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { makeCerts, type TestCerts } from './certs.js';
import { type HttpResult, request } from './http-client.js';
import { type NatsServer, startNatsServer } from './nats-server.js';
import { freePort, retryOnPortTaken } from './ports.js';
import { startPostgres } from './postgres.js';
import {
  REPO_ROOT,
  type ServiceName,
  type ServiceProcess,
  startServiceProcess,
} from './service-process.js';

const execFileAsync = promisify(execFile);

export interface KeyObject {
  id: string;
  key: string;
  kind: 'live' | 'test';
  client: 'web' | 'mobile';
  domain: string | null;
  expires_at: string | number | null;
  scope?: 'subscribe' | 'dispatch' | 'both';
  require_token?: boolean;
  /** Only for a key that requires recipient tokens: shown once, at creation. */
  signing_secret?: string;
  /** Inbox mode: days each event is kept per recipient; null: not stored. */
  inbox_days?: number | null;
  /** Made with the opt-out of the recipient tokens a web inbox key otherwise requires. */
  allow_unsigned_recipients?: boolean;
  /** Tokens came on by the rule for web inbox keys, not because they were asked for. */
  tokens_by_default?: boolean;
  /** A web key without tokens: what anyone with it can do, and how to turn tokens on. */
  token_warning?: string | null;
}

export interface StackOptions {
  /** Which services to run; default auth, ingress-api and socket-edge. */
  services?: ServiceName[];
  /** The plan catalogue; default {@link TEST_PLANS}, whose limits stay out of the way of tests. */
  plans?: unknown;
  /** Extra environment per service (limits, timeouts). */
  env?: Partial<Record<ServiceName, Record<string, string>>>;
}

export interface Stack {
  baseUrl: string;
  wsUrl: string;
  natsUrl: string;
  databaseUrl: string;
  ca: string;
  caFile: string;
  nats: NatsServer;
  ports: Record<ServiceName, number>;
  /** Each running service's plain-HTTP ops port on 127.0.0.1 (/metrics, /readyz with its checks). */
  opsPorts: Record<ServiceName, number>;
  /** A new account; a paid `plan` runs `until` (ISO date; default a year from now). */
  createAccount(opts?: { email?: string; plan?: string; until?: string }): Promise<{ id: string }>;
  createKey(opts: {
    account: string;
    kind?: 'live' | 'test';
    client?: 'web' | 'mobile';
    domain?: string;
    scope?: 'subscribe' | 'dispatch' | 'both';
    requireToken?: boolean;
    /** Inbox mode (`--inbox-days N`): keep every event N days per recipient. */
    inboxDays?: number;
    /** The opt-out (`--allow-unsigned-recipients`): a web inbox key without tokens. */
    allowUnsignedRecipients?: boolean;
  }): Promise<KeyObject>;
  revokeKey(id: string): Promise<void>;
  /** Runs the admin CLI against this stack and returns its parsed `--json` output. */
  admin(args: string[]): Promise<unknown>;
  /** Runs the admin CLI against this stack without --json: its stdout as printed. */
  adminText(args: string[]): Promise<string>;
  /** A request on the account API as `account` (made by {@link createAccount} on the free plan). */
  accountApi(account: string, method: string, path: string, body?: unknown): Promise<HttpResult>;
  startService(name: ServiceName): Promise<void>;
  stopService(name: ServiceName, signal?: NodeJS.Signals): Promise<void>;
  restart(name: ServiceName, opts?: { signal?: NodeJS.Signals }): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The whole stack on real servers: a private nats-server and Postgres on free ports, a throwaway
 * CA, and each Herald service as its own child process over TLS. Tests reach it only through its
 * public surfaces (HTTPS, WSS, NATS, the admin CLI), never through service internals.
 */
export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const wanted = opts.services ?? ['auth', 'ingress-api', 'socket-edge'];
  const [nats, pg, certs] = await Promise.all([startNatsServer(), startPostgres(), makeCerts()]);
  const plansFile = writePlans(certs.dir, opts.plans);
  // Seals keys' signing secrets at rest (auth and the admin CLI share it).
  const secretKey = randomBytes(32).toString('base64');
  const ports = {
    auth: await freePort(),
    'ingress-api': await freePort(),
    'socket-edge': await freePort(),
    retention: await freePort(),
    status: await freePort(),
  } satisfies Record<ServiceName, number>;
  // Each service's loopback ops listener (/metrics, readiness detail): a free port per start.
  const opsPorts = {} as Record<ServiceName, number>;
  const running = new Map<ServiceName, ServiceProcess>();
  const baseEnv = (name: ServiceName): Record<string, string> => ({
    // Each service logs in as its own NATS user, with only its own subjects.
    ...nats.env(name),
    ...(name === 'auth' ? { NATS_CALLOUT_SEED: nats.calloutSeed } : {}),
    DATABASE_URL: pg.url,
    TLS_CERT_FILE: certs.certFile,
    TLS_KEY_FILE: certs.keyFile,
    PLANS_FILE: plansFile,
    // Cheap password hashing: the tests make many accounts; production keeps the default (15).
    PASSWORD_SCRYPT_LOG_N: '10',
    SECRET_ENCRYPTION_KEY: secretKey,
    ...opts.env?.[name],
  });
  const everStarted = new Set<ServiceName>();
  const startService = async (name: ServiceName) => {
    const launch = async (port: number, opsPort: number) => {
      const env = { OPS_PORT: String(opsPort), ...baseEnv(name) };
      const proc = await startServiceProcess(name, port, env, certs.ca);
      ports[name] = port;
      opsPorts[name] = Number(env.OPS_PORT);
      return proc;
    };
    // A first start may find its port (or its ops port) taken by another test process and move
    // both; a restart must keep the addresses clients and scrapers reconnect to.
    const proc = everStarted.has(name)
      ? await launch(ports[name], opsPorts[name])
      : await retryOnPortTaken(async (port) => launch(port, await freePort()), ports[name]);
    everStarted.add(name);
    running.set(name, proc);
  };
  const stopService = async (name: ServiceName, signal: NodeJS.Signals = 'SIGTERM') => {
    await running.get(name)?.stop(signal);
    running.delete(name);
  };
  const cleanup = async () => {
    await Promise.all([...running.keys()].map((n) => stopService(n)));
    await Promise.all([nats.stop(), pg.stop()]);
  };
  try {
    // auth migrates the database; the others need it answering rt.auth.verify.
    if (wanted.includes('auth')) await startService('auth');
    await Promise.all(wanted.filter((n) => n !== 'auth').map(startService));
  } catch (err) {
    await cleanup();
    throw err;
  }
  // Tenants are made through the account API, as a customer would: far quicker than a CLI
  // process per call. Sessions are kept per account for key creation and revocation.
  const authUrl = `https://127.0.0.1:${ports.auth}`;
  const sessions = new Map<string, Record<string, string>>();
  const keyOwners = new Map<string, string>();
  const login = async (email: string, password: string) => {
    const res = await request('POST', `${authUrl}/v1/sessions`, certs.ca, { email, password });
    if (res.status !== 201) throw new Error(`login failed: ${res.status} ${res.text}`);
    const cookie = String(res.headers['set-cookie'] ?? '').split(';')[0] ?? '';
    return { cookie, 'x-herald-csrf': res.body.csrf as string };
  };
  const adminEnv = () => ({
    DATABASE_URL: pg.url,
    ...nats.env('auth'),
    PLANS_FILE: plansFile,
    SECRET_ENCRYPTION_KEY: secretKey,
    ...(opts.env?.auth?.TOKEN_SECRET_OVERLAP_MS
      ? { TOKEN_SECRET_OVERLAP_MS: opts.env.auth.TOKEN_SECRET_OVERLAP_MS }
      : {}),
  });
  const admin = (args: string[]) => runAdmin(args, adminEnv());
  return {
    get baseUrl() {
      return `https://127.0.0.1:${ports['ingress-api']}`;
    },
    get wsUrl() {
      return `wss://127.0.0.1:${ports['socket-edge']}`;
    },
    natsUrl: nats.url,
    databaseUrl: pg.url,
    ca: certs.ca,
    caFile: certs.caFile,
    nats,
    ports,
    opsPorts,
    admin,
    adminText: (args: string[]) => runAdminText(args, adminEnv()),
    accountApi(account, method, path, body) {
      const session = sessions.get(account);
      if (!session)
        throw new Error(`account ${account} has no session: create it on the free plan`);
      return request(method, `${authUrl}${path}`, certs.ca, body, session);
    },
    async createAccount(o = {}) {
      const email = o.email ?? `acct-${randomUUID()}@test.herald`;
      if (o.plan && o.plan !== 'free') {
        // A paid plan is support's to set: only the admin CLI can.
        const out = (await admin([
          'account',
          'create',
          '--email',
          email,
          '--plan',
          o.plan,
          '--until',
          o.until ?? new Date(Date.now() + 365 * 86_400_000).toISOString(),
          '--json',
        ])) as { id: string };
        return { id: out.id };
      }
      const password = randomUUID();
      const signup = await request('POST', `${authUrl}/v1/accounts`, certs.ca, { email, password });
      if (signup.status !== 201) throw new Error(`signup failed: ${signup.status} ${signup.text}`);
      sessions.set(signup.body.id, await login(email, password));
      return { id: signup.body.id as string };
    },
    async createKey(o) {
      const session = sessions.get(o.account);
      if (!session) {
        const args = [
          'key',
          'create',
          '--account',
          o.account,
          '--kind',
          o.kind ?? 'test',
          '--client',
          o.client ?? 'mobile',
        ];
        if (o.domain) args.push('--domain', o.domain);
        if (o.scope) args.push('--scope', o.scope);
        if (o.requireToken) args.push('--require-token');
        if (o.inboxDays !== undefined) args.push('--inbox-days', String(o.inboxDays));
        if (o.allowUnsignedRecipients) args.push('--allow-unsigned-recipients');
        return (await admin([...args, '--json'])) as KeyObject;
      }
      const path = (o.kind ?? 'test') === 'test' ? '/v1/keys/test' : '/v1/keys';
      const body = {
        client: o.client ?? 'mobile',
        ...(o.domain ? { domain: o.domain } : {}),
        ...(o.scope ? { scope: o.scope } : {}),
        ...(o.requireToken ? { require_token: true } : {}),
        ...(o.inboxDays !== undefined ? { inbox_days: o.inboxDays } : {}),
        ...(o.allowUnsignedRecipients ? { allow_unsigned_recipients: true } : {}),
      };
      const res = await request('POST', `${authUrl}${path}`, certs.ca, body, session);
      if (res.status !== 201) throw new Error(`key create failed: ${res.status} ${res.text}`);
      keyOwners.set(res.body.id, o.account);
      return res.body as KeyObject;
    },
    async revokeKey(id) {
      const session = sessions.get(keyOwners.get(id) ?? '');
      if (!session) {
        await admin(['key', 'revoke', '--key', id, '--json']);
        return;
      }
      const res = await request('DELETE', `${authUrl}/v1/keys/${id}`, certs.ca, undefined, session);
      if (res.status !== 200) throw new Error(`key revoke failed: ${res.status} ${res.text}`);
    },
    startService,
    stopService,
    async restart(name, o = {}) {
      await stopService(name, o.signal ?? 'SIGTERM');
      await startService(name);
    },
    stop: cleanup,
  };
}

/** Runs the admin CLI (from source) with the given connection settings and parses its `--json` output. */
export async function runAdmin(args: string[], env: Record<string, string>): Promise<unknown> {
  return JSON.parse(await runAdminText(args, env));
}

/** Runs the admin CLI (from source) with the given connection settings: its stdout as printed. */
export async function runAdminText(args: string[], env: Record<string, string>): Promise<string> {
  try {
    const { stdout } = await execFileAsync(
      process.execPath,
      [
        '--conditions=herald-source',
        '--import',
        'tsx',
        join('services', 'auth', 'src', 'admin.ts'),
        ...args,
      ],
      { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env } },
    );
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`admin ${args.join(' ')} failed: ${e.stderr || e.stdout || e.message}`);
  }
}

export type { TestCerts };

/**
 * The catalogue the test stack runs with: the shipped plans' shape, with limits high enough that
 * a test only meets a cap it sets on purpose (through `StackOptions.plans`).
 */
export const TEST_PLANS = {
  plans: [
    { id: 'free', name: 'Free', paid: false, limits: limits(), price: { usd: 0, kes: 0 } },
    { id: 'hobby', name: 'Hobby', paid: true, limits: limits(), price: { usd: 9, kes: 1200 } },
    { id: 'startup', name: 'Startup', paid: true, limits: limits(), price: { usd: 49, kes: 6500 } },
  ],
  test_key_limits: limits(),
};

function limits() {
  return {
    connections: 10_000,
    dispatch_rate: 100_000,
    dispatch_burst: 100_000,
    queue_per_recipient: 10_000,
  };
}

function writePlans(dir: string, plans: unknown = TEST_PLANS): string {
  const file = join(dir, 'plans.json');
  writeFileSync(file, JSON.stringify(plans));
  return file;
}

import https from 'node:https';
import { closeServer, createLogger, createServer, type Handler, listen } from '@herald/kit';
import { BillingNotice, billingSubjects } from '@herald/proto';
import { makeCerts, type TestCerts } from '@herald/testkit';
import type { Kysely } from 'kysely';
import { connect, JSONCodec, type NatsConnection } from 'nats';
import {
  type DarajaSimulator,
  SANDBOX_PASSKEY,
  SANDBOX_SHORTCODE,
  SIM_CONSUMER_KEY,
  SIM_CONSUMER_SECRET,
  startDarajaSimulator,
} from '../../../lib/payments/src/simulator/index.js';
import { type AuthConfig, loadConfig } from '../src/config.js';
import type { AuthDb } from '../src/db-schema.js';
import { type AuthService, createAuthService } from '../src/index.js';
import { TEST_CATALOGUE } from './catalogue.js';
import { natsOf, type Servers, startServers } from './servers.js';

export const DASHBOARD = 'https://dashboard.example.com';
export const PASSWORD = 'correct horse battery';
/** Short enough for tests to move the clock past it, long enough never to pass on its own. */
export const PAYMENT_TIMEOUT_MS = 120_000;
export const QUERY_INTERVAL_MS = 10_000;
export const REMINDER_MS = 7 * 24 * 3600_000;

/** The billing environment pointing at the simulator (also what the admin CLI test uses). */
export function billingEnv(sim: DarajaSimulator, callbackBase: string): Record<string, string> {
  return {
    BILLING_PROVIDER: 'mpesa',
    BILLING_CALLBACK_URL: callbackBase,
    MPESA_BASE_URL: sim.url,
    MPESA_CONSUMER_KEY: SIM_CONSUMER_KEY,
    MPESA_CONSUMER_SECRET: SIM_CONSUMER_SECRET,
    MPESA_SHORTCODE: SANDBOX_SHORTCODE,
    MPESA_PASSKEY: SANDBOX_PASSKEY,
    PAYMENT_TIMEOUT_MS: String(PAYMENT_TIMEOUT_MS),
    PAYMENT_QUERY_INTERVAL_MS: String(QUERY_INTERVAL_MS),
    // Tests run sweeps themselves (billing.sweep()), so the timer never races them.
    BILLING_SWEEP_INTERVAL_MS: String(3600_000),
    RENEWAL_REMINDER_MS: String(REMINDER_MS),
  };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: the assertions themselves check each body's shape
  body: any;
}

export interface Login {
  cookie: string;
  csrf: string;
  accountId: string;
  email: string;
}

/**
 * Auth over real HTTPS with billing on, against a real Postgres, nats-server and the Daraja
 * simulator (which posts callbacks to auth's listener). The service's clock is `fixture.clock`.
 */
export class BillingFixture {
  servers!: Servers;
  db!: Kysely<AuthDb>;
  certs!: TestCerts;
  sim!: DarajaSimulator;
  nc!: NatsConnection;
  listener!: NatsConnection;
  service!: AuthService;
  config!: AuthConfig;
  port = 0;
  clock = Date.now();
  readonly notices: BillingNotice[] = [];
  readonly invalidations: unknown[] = [];
  #server: ReturnType<typeof createServer> | undefined;

  /** `env`: more auth settings (for example DASHBOARD_WS_URL, DASHBOARD_KEY_TTL_MS). */
  async start(env: Record<string, string> = {}): Promise<void> {
    [this.servers, this.certs] = await Promise.all([startServers({ nats: true }), makeCerts()]);
    this.db = this.servers.db;
    this.sim = await startDarajaSimulator({
      resultDelayMs: null,
      ca: this.certs.ca,
      lateCallbackMs: 50,
    });
    const nats = natsOf(this.servers);
    [this.nc, this.listener] = await Promise.all([
      connect(nats.connectOptions('auth')),
      connect(nats.connectOptions()),
    ]);
    const codec = JSONCodec();
    this.listener.subscribe(billingSubjects.noticeAll, {
      callback: (_err, msg) => this.notices.push(BillingNotice.parse(codec.decode(msg.data))),
    });
    this.listener.subscribe('rt.auth.invalidate', {
      callback: (_err, msg) => this.invalidations.push(codec.decode(msg.data)),
    });
    await this.listener.flush();
    const base = {
      DATABASE_URL: this.servers.pg.url,
      ...nats.env('auth'),
      TLS_CERT_FILE: this.certs.certFile,
      TLS_KEY_FILE: this.certs.keyFile,
      ACCOUNT_API_ORIGIN: DASHBOARD,
      PASSWORD_SCRYPT_LOG_N: '10',
      // Tests move the clock by days (reminders, lapse): sessions must outlive that.
      SESSION_TTL_MS: String(30 * 24 * 3600_000),
      ...env,
    };
    // The callback URL holds the listener's port, so the listener comes first.
    let handler: Handler = (_req, res) => {
      res.statusCode = 503;
      res.end();
    };
    this.#server = createServer(loadConfig(base), (req, res) => handler(req, res));
    this.port = await listen(this.#server, 0, '127.0.0.1');
    this.config = loadConfig({
      ...base,
      ...billingEnv(this.sim, `https://localhost:${this.port}`),
    });
    this.service = createAuthService(this.config, {
      nc: this.nc,
      db: this.db,
      logger: createLogger('billing-test', 'silent'),
      catalogue: TEST_CATALOGUE,
      now: () => this.clock,
    });
    handler = this.service.handler;
  }

  async stop(): Promise<void> {
    if (this.#server) await closeServer(this.#server);
    await this.service?.close();
    await this.sim?.close();
    await Promise.all([this.nc?.close(), this.listener?.close()]);
    await this.servers?.stop();
  }

  /** One HTTPS request to auth; `body` is sent as JSON. */
  call(
    method: string,
    path: string,
    opts: { body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Reply> {
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const headers: Record<string, string> = {
      ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      ...opts.headers,
    };
    return new Promise((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port: this.port,
          path,
          method,
          headers,
          ca: this.certs.ca,
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

  /** A new account with a dashboard session. */
  async newUser(): Promise<Login> {
    const email = `billing-${crypto.randomUUID()}@example.com`;
    const signup = await this.call('POST', '/v1/accounts', { body: { email, password: PASSWORD } });
    if (signup.status !== 201) throw new Error(`signup: ${JSON.stringify(signup.body)}`);
    return this.login(email);
  }

  /** Another login (session) of an existing account. */
  async login(email: string): Promise<Login> {
    const res = await this.call('POST', '/v1/sessions', { body: { email, password: PASSWORD } });
    if (res.status !== 201) throw new Error(`login: ${JSON.stringify(res.body)}`);
    const setCookie = String(res.headers['set-cookie']?.[0] ?? '');
    return {
      cookie: setCookie.split(';')[0] ?? '',
      csrf: res.body.csrf,
      accountId: res.body.account_id,
      email,
    };
  }

  /** Headers of a dashboard request. */
  as(session: Login): Record<string, string> {
    return { cookie: session.cookie, 'x-herald-csrf': session.csrf, origin: DASHBOARD };
  }

  /** Polls until `check` holds (for deliveries that happen on another connection). */
  async waitFor(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

import https from 'node:https';
import { hashKey } from '@herald/access';
import { closeServer, createLogger, createServer, listen } from '@herald/kit';
import { AuthVerifyReply, subjects } from '@herald/proto';
import { makeCerts } from '@herald/testkit';
import { connect, JSONCodec, type NatsConnection } from 'nats';
import { expect } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createAuthService } from '../src/index.js';
import { TEST_CATALOGUE } from './catalogue.js';
import { natsOf, type Servers, startServers } from './servers.js';

const DASHBOARD = 'https://dashboard.example.com';
const PASSWORD = 'correct horse battery';
const codec = JSONCodec();

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: the assertions themselves check each body's shape
  body: any;
}

export interface User {
  cookie: string;
  csrf: string;
  accountId: string;
}

/** Auth's account API over real HTTPS, on a private Postgres and nats-server, for one test file. */
export interface AccountApiStack {
  servers: Servers;
  /** An operator connection (not auth's user): asks rt.auth.verify, stands in for other services. */
  operatorNc: NatsConnection;
  call(
    method: string,
    path: string,
    opts?: { body?: unknown; headers?: Record<string, string> },
  ): Promise<Reply>;
  /** A fresh account (signed up on the free plan) and its session. */
  newUser(): Promise<User>;
  /** The headers the dashboard sends: session cookie, CSRF, its Origin. */
  as(user: User): Record<string, string>;
  verify(key: string): Promise<AuthVerifyReply>;
  stop(): Promise<void>;
}

/**
 * Starts auth (the account API and rt.auth.verify) as account-api.test.ts does, with `env` over
 * its settings. The account API itself is TLS-only, so requests go through node:https with the
 * test CA.
 */
export async function startAccountApi(env: Record<string, string> = {}): Promise<AccountApiStack> {
  const [servers, certs] = await Promise.all([startServers({ nats: true }), makeCerts()]);
  const nats = natsOf(servers);
  const [authNc, operatorNc] = await Promise.all([
    connect(nats.connectOptions('auth')),
    connect(nats.connectOptions()),
  ]);
  const config = loadConfig({
    DATABASE_URL: servers.pg.url,
    ...nats.env('auth'),
    TLS_CERT_FILE: certs.certFile,
    TLS_KEY_FILE: certs.keyFile,
    ACCOUNT_API_ORIGIN: DASHBOARD,
    PASSWORD_SCRYPT_LOG_N: '10',
    ...env,
  });
  const service = createAuthService(config, {
    nc: authNc,
    db: servers.db,
    logger: createLogger('auth-test', 'silent'),
    catalogue: TEST_CATALOGUE,
  });
  const server = createServer(config, service.handler);
  const port = await listen(server, 0, '127.0.0.1');

  const call: AccountApiStack['call'] = (method, path, opts = {}) => {
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const headers = {
      ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      ...opts.headers,
    };
    return new Promise((resolve, reject) => {
      const req = https.request(
        { host: '127.0.0.1', port, path, method, headers, ca: certs.ca, servername: 'localhost' },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            text += c;
          });
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: text === '' ? undefined : JSON.parse(text),
            }),
          );
        },
      );
      req.on('error', reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  };

  return {
    servers,
    operatorNc,
    call,
    async newUser() {
      const email = `push-${crypto.randomUUID()}@example.com`;
      const signup = await call('POST', '/v1/accounts', { body: { email, password: PASSWORD } });
      expect(signup.status).toBe(201);
      const res = await call('POST', '/v1/sessions', { body: { email, password: PASSWORD } });
      expect(res.status).toBe(201);
      const setCookie = String(res.headers['set-cookie']?.[0] ?? '');
      return {
        cookie: setCookie.split(';')[0] ?? '',
        csrf: res.body.csrf,
        accountId: res.body.account_id,
      };
    },
    as: (user) => ({ cookie: user.cookie, 'x-herald-csrf': user.csrf, origin: DASHBOARD }),
    async verify(key) {
      const msg = await operatorNc.request(
        subjects.authVerify,
        codec.encode({ v: 1, key_hash: hashKey(key) }),
        { timeout: 2000 },
      );
      return AuthVerifyReply.parse(codec.decode(msg.data));
    },
    async stop() {
      await closeServer(server);
      await service.close();
      await Promise.all([authNc.close(), operatorNc.close()]);
      await servers.stop();
    },
  };
}

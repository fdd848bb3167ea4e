import { randomBytes } from 'node:crypto';
import { makeCerts, type TestCerts } from './certs.js';
import { type NatsServer, startNatsServer } from './nats-server.js';
import { freePort, retryOnPortTaken } from './ports.js';
import { startPostgres } from './postgres.js';
import { type ServiceName, type ServiceProcess, startServiceProcess } from './service-process.js';
import { runAdmin, runAdminText, type Tenants, tenants } from './tenants.js';
import { writePlans } from './test-plans.js';

export interface StackOptions {
  /** Which services to run; default auth, ingress-api and socket-edge. */
  services?: ServiceName[];
  /** The plan catalogue; default {@link TEST_PLANS}, whose limits stay out of the way of tests. */
  plans?: unknown;
  /** Extra environment per service (limits, timeouts). */
  env?: Partial<Record<ServiceName, Record<string, string>>>;
  /** Serve nats-server's HTTP monitoring (`stack.nats.monitorUrl`): the soak samples it. */
  natsMonitor?: boolean;
}

export interface Stack extends Tenants {
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
  /** Starts a service; `env` overrides the stack's environment for this start only. */
  startService(name: ServiceName, env?: Record<string, string>): Promise<void>;
  stopService(name: ServiceName, signal?: NodeJS.Signals): Promise<void>;
  restart(
    name: ServiceName,
    opts?: { signal?: NodeJS.Signals; env?: Record<string, string> },
  ): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The whole stack on real servers: a private nats-server and Postgres on free ports, a throwaway
 * CA, and each Herald service as its own child process over TLS. Tests reach it only through its
 * public surfaces (HTTPS, WSS, NATS, the admin CLI), never through service internals.
 */
export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const wanted = opts.services ?? ['auth', 'ingress-api', 'socket-edge'];
  const [nats, pg, certs] = await Promise.all([
    startNatsServer(opts.natsMonitor ? { monitor: true } : {}),
    startPostgres(),
    makeCerts(),
  ]);
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
  const startService = async (name: ServiceName, extra: Record<string, string> = {}) => {
    const launch = async (port: number, opsPort: number) => {
      const env = { OPS_PORT: String(opsPort), ...baseEnv(name), ...extra };
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
    await Promise.all(wanted.filter((n) => n !== 'auth').map((n) => startService(n)));
  } catch (err) {
    await cleanup();
    throw err;
  }
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
  const adminText = (args: string[]) => runAdminText(args, adminEnv());
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
    ...tenants(`https://127.0.0.1:${ports.auth}`, certs.ca, admin, adminText),
    startService,
    stopService,
    async restart(name, o = {}) {
      await stopService(name, o.signal ?? 'SIGTERM');
      await startService(name, o.env);
    },
    stop: cleanup,
  };
}

export type { TestCerts };

import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  runAdmin as admin,
  freePort,
  makeCerts,
  startNatsServer,
  startPostgres,
  type TestCerts,
  tenants,
} from '@herald/testkit';
import { writeBenchPlans } from './bench-plans.js';
import { type NodeProcess, startNodeProcess } from './node-process.js';
import { type Pinning, pidListeningOn } from './pinning.js';
import type { NamedProcess } from './process-cpu.js';

/** Every service that handles an event, as deploy/ runs them (retention, weekly, handles none in a run). */
export type HeraldService = 'auth' | 'ingress-api' | 'socket-edge' | 'status';

export interface HeraldStack {
  baseUrl: string;
  wsUrl: string;
  natsUrl: string;
  /** The operator's NATS login (the load generator's, the baselines'). */
  natsLogin: { servers: string; user: string; pass: string };
  certs: TestCerts;
  /** The account and mobile key every scenario dispatches with. */
  account: string;
  apiKey: string;
  /**
   * One more account with a mobile key of its own (figure 7's, whose webhooks are on); with
   * `pushAfterMs`, the key is opted in to the push fallback (`--push-after-ms`, figure 8's); with
   * `inboxDays`, it is an inbox key (`--inbox-days`, figure 4's inbox device rows).
   */
  createTenant(opts?: { pushAfterMs?: number; inboxDays?: number }): Promise<Tenant>;
  /**
   * A Pusher app (issue 41) of the stack's account, bound to its key, with `--user-ids uuid`: a
   * signed-in user id is the recipient itself (figure 9's).
   */
  createPusherApp(): Promise<PusherApp>;
  /** The edge process (inspector open, for figure 5). */
  edge(): NodeProcess;
  /** What was pinned where, for the report. */
  pinned: string[];
  /** Every server process of the stack, for CPU accounting. */
  processes: NamedProcess[];
  stop(): Promise<void>;
}

export interface HeraldStackOptions {
  pinning: Pinning;
  /** Extra environment per service (limits). */
  env: Partial<Record<HeraldService, Record<string, string>>>;
  cpuProfDir?: string;
  /** `dist`: the production build (`node services/<name>/dist/main.js`); `source`: tsx. */
  runtime: Runtime;
}

export type Runtime = 'dist' | 'source';

export interface Tenant {
  account: string;
  apiKey: string;
  keyId: string;
}

/** What pusher-js and the `pusher` library are given for an app. */
export interface PusherApp {
  app_id: string;
  key: string;
  secret: string;
}

/** The entry point of a service (or a bench baseline) in the given runtime. */
export function entryPoint(runtime: Runtime, dir: string, name: string): string {
  return runtime === 'dist' ? join(dir, 'dist', `${name}.js`) : join(dir, 'src', `${name}.ts`);
}

/**
 * Herald as the stack harness runs it (private nats-server and Postgres on free ports, a throwaway
 * CA, each service a child process over TLS), with every server process pinned to the server CPUs
 * and the edge's inspector open. The harness's startStack cannot pin its children, so this reuses
 * its parts instead.
 */
export async function startHeraldStack(opts: HeraldStackOptions): Promise<HeraldStack> {
  const { pinning } = opts;
  const [nats, pg, certs] = await Promise.all([startNatsServer(), startPostgres(), makeCerts()]);
  const plansFile = writeBenchPlans(certs.dir);
  // Auth seals secrets at rest with it (Pusher app secrets, figure 9's), as deployed.
  const secretKey = randomBytes(32).toString('base64');
  const pinned: string[] = [];
  const processes: NamedProcess[] = [];
  const running: NodeProcess[] = [];
  const stopAll = async () => {
    await Promise.all(running.map((p) => p.stop()));
    await Promise.all([nats.stop(), pg.stop()]);
  };
  try {
    for (const [name, port] of [
      ['nats-server', nats.port],
      ['postgres', pg.port],
    ] as const) {
      const pid = await pidListeningOn(port);
      // Postgres works in a backend process per connection, forked by the postmaster.
      if (pid !== undefined) processes.push({ name, pid, tree: name === 'postgres' });
      if (pid !== undefined && pinning.enabled) {
        await pinning.pinServer(pid);
        pinned.push(`${name} (pid ${pid}) → CPU ${pinning.serverCpus}`);
      }
    }
    if (opts.cpuProfDir) mkdirSync(opts.cpuProfDir, { recursive: true });
    const start = async (name: HeraldService, inspect: boolean) => {
      const proc = await startNodeProcess({
        name,
        script: entryPoint(opts.runtime, join('services', name), 'main'),
        port: await freePort(),
        ...(inspect ? { inspectPort: await freePort() } : {}),
        ...(opts.cpuProfDir ? { cpuProfDir: opts.cpuProfDir } : {}),
        ca: certs.ca,
        prefix: pinning.serverPrefix(),
        env: {
          // Each service as its own NATS user, as deployed; auth answers the callout.
          ...nats.env(name),
          ...(name === 'auth'
            ? { NATS_CALLOUT_SEED: nats.calloutSeed, SECRET_ENCRYPTION_KEY: secretKey }
            : {}),
          DATABASE_URL: pg.url,
          TLS_CERT_FILE: certs.certFile,
          TLS_KEY_FILE: certs.keyFile,
          PLANS_FILE: plansFile,
          // The ops listener (/metrics) on a port the OS picks: never a fixed one a dev stack holds.
          OPS_PORT: '0',
          ...opts.env[name],
        },
      });
      running.push(proc);
      processes.push({ name, pid: proc.pid });
      if (pinning.enabled) pinned.push(`${name} (pid ${proc.pid}) → CPU ${pinning.serverCpus}`);
      return proc;
    };
    // auth migrates the database; the others need it answering rt.auth.verify. The status
    // service writes every event's delivery record: a Herald without it is one nobody deploys.
    const auth = await start('auth', false);
    const [ingress, edge] = await Promise.all([
      start('ingress-api', false),
      start('socket-edge', true),
      start('status', false),
    ]);
    const adminEnv = {
      DATABASE_URL: pg.url,
      ...nats.env('auth'),
      PLANS_FILE: plansFile,
      SECRET_ENCRYPTION_KEY: secretKey,
    };
    // Tenants through the account API, as a customer makes them: far quicker than a CLI process.
    const api = tenants(
      `https://127.0.0.1:${auth.port}`,
      certs.ca,
      (args) => admin(args, adminEnv),
      () => Promise.reject(new Error('the bench reads the admin CLI as JSON only')),
    );
    const createTenant = async (
      o: { pushAfterMs?: number; inboxDays?: number } = {},
    ): Promise<Tenant> => {
      const { id } = await api.createAccount({ email: `bench-${randomUUID()}@bench.herald` });
      const key = await api.createKey({
        account: id,
        kind: 'test',
        client: 'mobile',
        ...(o.pushAfterMs === undefined ? {} : { push: { afterMs: o.pushAfterMs } }),
        ...(o.inboxDays === undefined ? {} : { inboxDays: o.inboxDays }),
      });
      return { account: id, apiKey: key.key, keyId: key.id };
    };
    const tenant = await createTenant();
    return {
      baseUrl: `https://127.0.0.1:${ingress.port}`,
      wsUrl: `wss://127.0.0.1:${edge.port}`,
      natsUrl: nats.url,
      natsLogin: nats.connectOptions(),
      certs,
      account: tenant.account,
      apiKey: tenant.apiKey,
      createTenant: (o) => createTenant(o),
      async createPusherApp() {
        const app = await api.createPusherApp({
          account: tenant.account,
          keyId: tenant.keyId,
          userIds: 'uuid',
        });
        return { app_id: app.app_id, key: app.key, secret: app.secret };
      },
      edge: () => edge,
      pinned,
      processes,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

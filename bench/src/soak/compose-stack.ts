import { join } from 'node:path';
import { parseEnv } from '@herald/kit';
import { PushService, tenants, WebhookReceiver } from '@herald/testkit';
import {
  composeStackFromEnv,
  egressGateway,
  issueCert,
  readEnvFile,
} from '@herald/testkit/compose';
import { connect, type NatsConnection } from 'nats';
import { z } from 'zod';
import { servicePids } from './compose-pids.js';
import { natsProbe, type Probe, postgresProbe, serviceProbe } from './sampler.js';
import { makeTenants, SERVICES, type SoakStack } from './soak-stack.js';

const port = (what: string) =>
  z.coerce
    .number({ error: `must be the port of ${what} on 127.0.0.1` })
    .int()
    .min(1, `must be the port of ${what} on 127.0.0.1 (1..65535)`)
    .max(65535, `must be the port of ${what} on 127.0.0.1 (1..65535)`);

/**
 * What scripts/soak.sh exports for `SOAK_TARGET=compose` beside the stack's own settings
 * (HERALD_COMPOSE_PROJECT, HERALD_DEPLOY_DIR, the public ports): the ports the soak-only compose
 * override (deploy/soak/override.yaml) publishes on 127.0.0.1, and the receiver CA.
 */
export const ComposeSoakEnv = z.object({
  HERALD_SOAK_NATS_PORT: port("nats' client port (TLS)"),
  HERALD_SOAK_NATS_MONITOR_PORT: port("nats' monitoring port"),
  HERALD_SOAK_OPS_PORT_AUTH: port("auth's ops listener"),
  HERALD_SOAK_OPS_PORT_INGRESS_API: port("ingress-api's ops listener"),
  HERALD_SOAK_OPS_PORT_SOCKET_EDGE: port("socket-edge's ops listener"),
  HERALD_SOAK_OPS_PORT_STATUS: port("status' ops listener"),
  HERALD_SOAK_OPS_PORT_RETENTION: port("retention's ops listener"),
  HERALD_DASHBOARD_PORT: port("auth's account API"),
  HERALD_WEBHOOK_CA_FILE: z.string().min(1, 'must name the receiver CA (scripts/soak.sh makes it)'),
});

/** The compose service of a process the run restarts or samples by pid. */
const COMPOSE_SERVICE = { 'socket-edge': 'socket-edge', 'nats-server': 'nats' } as const;

/**
 * `SOAK_TARGET=compose`: the docker compose stack scripts/soak.sh started (deploy/
 * docker-compose.yml and the soak-only override), reached on 127.0.0.1 only: its public ports,
 * and the override's NATS (TLS, as the operator user herald-admin), NATS monitoring and ops
 * listeners. The webhook receiver and push service listen on the stack's egress gateway with
 * certificates of the receiver CA, as the deploy tests' do; tenants are made with the admin CLI in
 * the auth container. Services are sampled through their ops listeners, nats-server through its
 * monitoring port and its container's pid, Postgres as its container's process tree.
 */
export async function startComposeSoakStack(): Promise<SoakStack> {
  const e = parseEnv('soak (SOAK_TARGET=compose, run by scripts/soak.sh)', ComposeSoakEnv);
  const cs = composeStackFromEnv();
  const demo = cs.demo();
  const host = await egressGateway(cs.project);
  const caFile = e.HERALD_WEBHOOK_CA_FILE;
  const receiver = await WebhookReceiver.start({
    host,
    tls: { ...(await issueCert(host)), caFile },
  });
  let pushService: PushService | undefined;
  let nc: NatsConnection | undefined;
  const stop = async () => {
    await nc?.close().catch(() => undefined);
    await receiver.stop();
    await pushService?.stop();
  };
  try {
    pushService = await PushService.start({ host, tls: { ...(await issueCert(host)), caFile } });
    const secrets = readEnvFile(join(cs.deployDir, '.env'));
    // A NATS restart is part of the run: never give up reconnecting.
    nc = await connect({
      servers: `tls://127.0.0.1:${e.HERALD_SOAK_NATS_PORT}`,
      user: 'herald-admin',
      pass: secrets.HERALD_NATS_PASSWORD_ADMIN ?? '',
      tls: { caFile: join(cs.deployDir, 'tls', 'ca.crt') },
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    // The admin CLI in the auth container (cs.admin adds --json itself).
    const admin = (args: string[]) => cs.admin(...args.filter((a) => a !== '--json'));
    const adminText = async (args: string[]) => {
      const res = await cs.compose(
        'exec',
        '-T',
        'auth',
        'node',
        'services/auth/dist/admin.js',
        ...args,
      );
      if (res.code !== 0) throw new Error(`admin ${args.join(' ')} failed: ${res.stderr}`);
      return res.stdout;
    };
    const made = await makeTenants({
      t: tenants(`https://localhost:${e.HERALD_DASHBOARD_PORT}`, cs.ca, admin, adminText),
      // Made with the admin CLI on a paid plan of the soak's catalogue (scripts/soak.sh).
      plan: 'hobby',
      baseUrl: demo.baseUrl,
      ca: cs.ca,
      nc,
      receiver,
      pushService,
    });
    const pids = servicePids(cs.project);
    const pgPid = await pids('postgres');
    const opsPort = {
      auth: e.HERALD_SOAK_OPS_PORT_AUTH,
      'ingress-api': e.HERALD_SOAK_OPS_PORT_INGRESS_API,
      'socket-edge': e.HERALD_SOAK_OPS_PORT_SOCKET_EDGE,
      status: e.HERALD_SOAK_OPS_PORT_STATUS,
      retention: e.HERALD_SOAK_OPS_PORT_RETENTION,
    } as Record<string, number>;
    const monitorUrl = `http://127.0.0.1:${e.HERALD_SOAK_NATS_MONITOR_PORT}`;
    const probes: Probe[] = [
      ...SERVICES.map((name) => serviceProbe(name, () => opsPort[name])),
      natsProbe(monitorUrl, () => pids(COMPOSE_SERVICE['nats-server'])),
      ...(pgPid === undefined ? [] : [postgresProbe(pgPid)]),
    ];
    return {
      describe: `compose, docker compose project ${cs.project} (deploy/docker-compose.yml with deploy/soak/override.yaml)`,
      baseUrl: demo.baseUrl,
      wsUrl: demo.wsUrl,
      ca: cs.ca,
      // `docker compose restart`: SIGTERM (the edge closes its sockets with 1001), then a start.
      async restart(p) {
        const res = await cs.compose('restart', COMPOSE_SERVICE[p]);
        if (res.code !== 0)
          throw new Error(`docker compose restart ${COMPOSE_SERVICE[p]} failed: ${res.stderr}`);
      },
      nc,
      monitorUrl,
      receiver,
      pushService,
      ...made,
      probes,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

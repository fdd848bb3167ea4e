import { randomBytes } from 'node:crypto';
import { PushService, type Stack, startStack, WebhookReceiver } from '@herald/testkit';
import { connect, type NatsConnection } from 'nats';
import { pidListeningOn } from '../env/pinning.js';
import { natsProbe, type Probe, postgresProbe, serviceProbe } from './sampler.js';
import { makeTenants, SERVICES, type SoakStack } from './soak-stack.js';

/**
 * `SOAK_TARGET=dev`: the whole stack as `make dev` runs it, started by the test kit on free ports
 * (a private nats-server with its monitoring port, Postgres, a throwaway CA), with a local webhook
 * receiver and push service the status service trusts; the run's tenants (soak-stack.ts); a probe
 * for every process.
 */
export async function startDevSoakStack(): Promise<SoakStack> {
  const receiver = await WebhookReceiver.start();
  const pushService = await PushService.start();
  let stack: Stack | undefined;
  let nc: NatsConnection | undefined;
  const stop = async () => {
    await nc?.close().catch(() => undefined);
    await stack?.stop();
    await receiver.stop();
    await pushService.stop();
  };
  try {
    stack = await startStack({
      services: SERVICES,
      natsMonitor: true,
      env: {
        status: {
          WEBHOOK_ALLOW_PRIVATE: 'true',
          WEBHOOK_CA_FILE: receiver.caFile,
          // Seals the endpoint's signing secret at rest, as the operator's deploy does.
          WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
          // The push service is on 127.0.0.1: allowed as `make dev` allows it.
          PUSH_ALLOW_PRIVATE: 'true',
          PUSH_CA_FILE: pushService.caFile,
        },
      },
    });
    const s = stack;
    const monitorUrl = s.nats.monitorUrl;
    if (!monitorUrl)
      throw new Error('the soak needs nats-server as a local binary (its monitoring port)');
    // A NATS restart is part of the run: never give up reconnecting.
    nc = await connect({
      ...s.nats.connectOptions(),
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    const tenants = await makeTenants({
      t: s,
      baseUrl: s.baseUrl,
      ca: s.ca,
      nc,
      receiver,
      pushService,
    });
    const pgPid = await pidListeningOn(Number(new URL(s.databaseUrl).port));
    const probes: Probe[] = [
      ...SERVICES.map((name) => serviceProbe(name, () => s.opsPorts[name])),
      natsProbe(monitorUrl, () => s.nats.pid?.()),
      ...(pgPid === undefined ? [] : [postgresProbe(pgPid)]),
    ];
    return {
      describe: "dev, make dev's processes from source, started by the test kit",
      baseUrl: s.baseUrl,
      wsUrl: s.wsUrl,
      ca: s.ca,
      // The edge SIGTERMed and started again on its port; nats-server on its port and store.
      restart: (p) => (p === 'socket-edge' ? s.restart('socket-edge') : s.nats.restart()),
      nc,
      monitorUrl,
      receiver,
      pushService,
      ...tenants,
      probes,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

import { randomUUID } from 'node:crypto';
import { SUBPROTOCOL } from '@herald/proto';
import { centrifugoFleet } from '../load/centrifugo-fleet.js';
import { SioFleet } from '../load/sio-fleet.js';
import { WsFleet } from '../load/ws-fleet.js';
import { type BenchContext, HANDSHAKE_TIMEOUT_MS } from './context.js';
import { centrifugoProcesses, centrifugoSystem, PROCESSES } from './cpu-meter.js';
import { connectUrl, notifyBody, pushBody, rawWsUrl, sdkConnectUrl } from './herald-wire.js';
import type { RampSubject } from './ramp.js';

export const SUBJECTS = {
  herald: 'Herald socket-edge',
  /** Issue 42: the SDK's default client (herald.v1, `batch=1`, a device id). */
  heraldDevice: 'Herald socket-edge, SDK default client (herald.v1, batch=1, device)',
  raw: 'baseline: raw ws server',
  socketIo: 'baseline: Socket.IO server',
  centrifugo: (engine: string) => `baseline: Centrifugo (${engine} engine)`,
} as const;

/**
 * The servers figures 5 and 6 ramp, in order: Herald with the plain-framing, device-less client
 * of issue 11 (and, for figure 5, the SDK's default client), the raw ws server, and for figure 5
 * Socket.IO and both Centrifugo engines.
 */
export function rampSubjects(ctx: BenchContext, want5: boolean): RampSubject[] {
  const fleetOpts = {
    tls: ctx.tls,
    addresses: ctx.addresses,
    concurrency: ctx.config.connectConcurrency,
    handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
  };
  const device = `ramp-${randomUUID()}`;
  return [
    {
      name: SUBJECTS.herald,
      role: 'herald',
      system: 'herald',
      inspectPort: ctx.stack.edge().inspectPort,
      alsoGrowing: ctx.servers.filter((p) => p.name === 'nats-server').map((p) => p.pid),
      port: ctx.stack.edge().port,
      processes: PROCESSES.herald,
      fleet: (rs) =>
        new WsFleet({ ...fleetOpts, url: (i) => connectUrl(ctx.stack, rs[i] as string) }),
      probe: {
        url: (r) => connectUrl(ctx.stack, r),
        http: ctx.http.ingress,
        path: '/notify',
        body: (r, p) => notifyBody(ctx.stack, r, p),
      },
    },
    ...(want5
      ? [
          {
            // Issue 42: the SDK's default client, whose device has the edge read its position
            // and catch up at every connect. Figure 5 only (its connect CPU and memory), to the
            // first memory level: a ramp costs minutes, and the per-connection cost is read there.
            name: SUBJECTS.heraldDevice,
            role: 'herald' as const,
            inspectPort: ctx.stack.edge().inspectPort,
            alsoGrowing: ctx.servers.filter((p) => p.name === 'nats-server').map((p) => p.pid),
            port: ctx.stack.edge().port,
            processes: PROCESSES.herald,
            firstLevelOnly: true,
            fleet: (rs: string[]) =>
              new WsFleet({
                ...fleetOpts,
                protocols: [SUBPROTOCOL],
                url: (i) => sdkConnectUrl(ctx.stack, rs[i] as string, device),
              }),
          },
        ]
      : []),
    {
      name: SUBJECTS.raw,
      role: 'baseline',
      system: 'rawWs',
      inspectPort: ctx.baselines.rawWs.inspectPort,
      port: ctx.baselines.rawWs.port,
      processes: PROCESSES.rawWs,
      fleet: (rs) =>
        new WsFleet({
          ...fleetOpts,
          url: (i) => rawWsUrl(ctx.baselines.rawWsOrigin, rs[i] as string),
        }),
      probe: {
        url: (r) => rawWsUrl(ctx.baselines.rawWsOrigin, r),
        http: ctx.http.rawWs,
        path: '/push',
        body: pushBody,
      },
    },
    ...(want5
      ? [
          {
            name: SUBJECTS.socketIo,
            role: 'baseline' as const,
            system: 'socketIo' as const,
            inspectPort: ctx.baselines.socketIo.inspectPort,
            port: ctx.baselines.socketIo.port,
            processes: PROCESSES.socketIo,
            fleet: (rs: string[]) =>
              new SioFleet({
                ...fleetOpts,
                origin: ctx.baselines.socketIoOrigin,
                recipient: (i) => rs[i] as string,
              }),
          },
          ...ctx.centrifugo.map(
            (peer): RampSubject => ({
              name: SUBJECTS.centrifugo(peer.engine),
              role: 'baseline',
              system: centrifugoSystem(peer.engine),
              inspectPort: undefined,
              pid: peer.server.process.pid,
              alsoGrowing: peer.server.processes
                .filter((p) => p.pid !== peer.server.process.pid)
                .map((p) => p.pid),
              port: peer.server.process.port,
              processes: centrifugoProcesses(peer.engine),
              fleet: (rs: string[]) =>
                centrifugoFleet({
                  ...fleetOpts,
                  server: peer.server,
                  recipient: (i) => rs[i] as string,
                  recover: false,
                }),
            }),
          ),
        ]
      : []),
  ];
}

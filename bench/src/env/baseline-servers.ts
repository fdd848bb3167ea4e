import { join } from 'node:path';
import { freePort, type TestCerts } from '@herald/testkit';
import { entryPoint, type Runtime } from './herald-stack.js';
import { type NodeProcess, startNodeProcess } from './node-process.js';
import type { Pinning } from './pinning.js';
import type { NamedProcess } from './process-cpu.js';

export interface BaselineServers {
  rawWs: NodeProcess;
  socketIo: NodeProcess;
  natsResponder: NodeProcess;
  koaJetStream: NodeProcess;
  designFloor: NodeProcess;
  /** https://127.0.0.1:port of each HTTP baseline. */
  rawWsOrigin: string;
  socketIoOrigin: string;
  koaJetStreamOrigin: string;
  designFloorOrigin: string;
  pinned: string[];
  processes: NamedProcess[];
  stop(): Promise<void>;
}

/** Starts the baseline servers on the server CPUs, with the same certificate as Herald. */
export async function startBaselineServers(opts: {
  pinning: Pinning;
  certs: TestCerts;
  /** Where the baselines' NATS is, and the login they use. */
  natsLogin: { servers: string; user: string; pass: string };
  cpuProfDir?: string;
  runtime: Runtime;
}): Promise<BaselineServers> {
  const started: NodeProcess[] = [];
  const start = async (name: string, file: string, http: boolean) => {
    const proc = await startNodeProcess({
      name,
      script: entryPoint(opts.runtime, 'bench', join('baselines', file)),
      port: await freePort(),
      ...(http ? { inspectPort: await freePort() } : { ready: 'stdout' as const }),
      ...(opts.cpuProfDir ? { cpuProfDir: opts.cpuProfDir } : {}),
      ca: opts.certs.ca,
      prefix: opts.pinning.serverPrefix(),
      env: {
        TLS_CERT_FILE: opts.certs.certFile,
        TLS_KEY_FILE: opts.certs.keyFile,
        NATS_URL: opts.natsLogin.servers,
        NATS_USER: opts.natsLogin.user,
        NATS_PASSWORD: opts.natsLogin.pass,
      },
    });
    started.push(proc);
    return proc;
  };
  try {
    const [rawWs, socketIo, natsResponder, koaJetStream, designFloor] = await Promise.all([
      start('baseline raw-ws', 'raw-ws-server', true),
      start('baseline socket.io', 'socketio-server', true),
      start('baseline nats-responder', 'nats-responder', false),
      start('baseline koa-jetstream', 'koa-jetstream-server', true),
      start('baseline design-floor', 'design-floor-relay', true),
    ]);
    return {
      rawWs,
      socketIo,
      natsResponder,
      koaJetStream,
      designFloor,
      rawWsOrigin: `https://127.0.0.1:${rawWs.port}`,
      socketIoOrigin: `https://127.0.0.1:${socketIo.port}`,
      koaJetStreamOrigin: `https://127.0.0.1:${koaJetStream.port}`,
      designFloorOrigin: `https://127.0.0.1:${designFloor.port}`,
      processes: started.map((p) => ({ name: p.name, pid: p.pid })),
      pinned: opts.pinning.enabled
        ? started.map((p) => `${p.name} (pid ${p.pid}) → CPU ${opts.pinning.serverCpus}`)
        : [],
      stop: async () => {
        await Promise.all(started.map((p) => p.stop()));
      },
    };
  } catch (err) {
    await Promise.all(started.map((p) => p.stop()));
    throw err;
  }
}

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNatsContainer, useContainers } from './containers.js';
import { makeNatsAuth, writeNatsConf } from './nats-auth.js';
import { natsServerBinary } from './nats-binary.js';
import { type LaunchedNats, launchNats, stopProcess } from './nats-launch.js';
import { type NatsServer, natsServerHandle } from './servers.js';

export type { NatsServer } from './servers.js';

/**
 * Starts a private nats-server with JetStream on a free port and a temporary store: never the
 * machine's shared server. It requires authentication exactly as deployed (deploy/nats/users.conf,
 * fresh passwords): connect with `server.connectOptions()` (the operator) or a service's user.
 * Uses testcontainers when HERALD_TEST_DOCKER=1 and Docker answers; otherwise the pinned local
 * binary (see nats-binary.ts). `maxFileStore`: the store-wide byte bound (always the binary).
 * `monitor`: serve the HTTP monitoring endpoints (`/varz`, `/jsz`) on a port of its own, kept
 * across restarts (always the binary: the soak reads them, and the server's pid).
 */
export async function startNatsServer(
  opts: { maxFileStore?: number; monitor?: boolean } = {},
): Promise<NatsServer> {
  const auth = makeNatsAuth();
  if (useContainers() && opts.maxFileStore === undefined && !opts.monitor)
    return startNatsContainer(auth);
  const { bin } = await natsServerBinary();
  const store = mkdtempSync(join(tmpdir(), 'herald-nats-'));
  const portsDir = join(store, 'ports');
  mkdirSync(portsDir);
  const conf = writeNatsConf(store, {
    jetstream: true,
    ...(opts.maxFileStore === undefined ? {} : { maxFileStore: opts.maxFileStore }),
  });
  const args = ['-c', conf];
  const env = auth.serverEnv;
  let current: LaunchedNats = await launchNats(bin, args, {
    portsDir,
    env,
    ...(opts.monitor ? { monitorPort: -1 } : {}),
  });
  const { port, monitorPort } = current;
  const kill = () => stopProcess(current.proc);
  const handle = natsServerHandle(`nats://127.0.0.1:${port}`, port, auth, {
    async stop(opts = {}) {
      await kill();
      if (!opts.keepStore) rmSync(store, { recursive: true, force: true });
    },
    async restart() {
      await kill();
      current = await launchNats(bin, args, {
        portsDir,
        port,
        env,
        ...(monitorPort === undefined ? {} : { monitorPort }),
      });
    },
  });
  return {
    ...handle,
    ...(monitorPort === undefined ? {} : { monitorUrl: `http://127.0.0.1:${monitorPort}` }),
    pid: () => current.proc.pid,
  };
}

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
 */
export async function startNatsServer(opts: { maxFileStore?: number } = {}): Promise<NatsServer> {
  const auth = makeNatsAuth();
  if (useContainers() && opts.maxFileStore === undefined) return startNatsContainer(auth);
  const { bin } = await natsServerBinary();
  const store = mkdtempSync(join(tmpdir(), 'herald-nats-'));
  const portsDir = join(store, 'ports');
  mkdirSync(portsDir);
  const conf = writeNatsConf(store, { jetstream: true, ...opts });
  const args = ['-c', conf];
  const env = auth.serverEnv;
  let current: LaunchedNats = await launchNats(bin, args, { portsDir, env });
  const { port } = current;
  const kill = () => stopProcess(current.proc);
  return natsServerHandle(`nats://127.0.0.1:${port}`, port, auth, {
    async stop(opts = {}) {
      await kill();
      if (!opts.keepStore) rmSync(store, { recursive: true, force: true });
    },
    async restart() {
      await kill();
      current = await launchNats(bin, args, { portsDir, port, env });
    },
  });
}

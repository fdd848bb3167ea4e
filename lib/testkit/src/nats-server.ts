import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNatsContainer, useContainers } from './containers.js';
import { natsServerBinary } from './nats-binary.js';
import { type LaunchedNats, launchNats, stopProcess } from './nats-launch.js';
import type { NatsServer } from './servers.js';

export type { NatsServer } from './servers.js';

/**
 * Starts a private nats-server with JetStream on a free port and a temporary store: never the
 * machine's shared server. Uses testcontainers when HERALD_TEST_DOCKER=1 and Docker answers;
 * otherwise the pinned local binary (see nats-binary.ts).
 */
export async function startNatsServer(): Promise<NatsServer> {
  if (useContainers()) return startNatsContainer();
  const { bin } = await natsServerBinary();
  const store = mkdtempSync(join(tmpdir(), 'herald-nats-'));
  const portsDir = join(store, 'ports');
  mkdirSync(portsDir);
  const args = ['-js', '-sd', store];
  let current: LaunchedNats = await launchNats(bin, args, { portsDir });
  const { port } = current;
  const kill = () => stopProcess(current.proc);
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    async stop(opts = {}) {
      await kill();
      if (!opts.keepStore) rmSync(store, { recursive: true, force: true });
    },
    async restart() {
      await kill();
      current = await launchNats(bin, args, { portsDir, port });
    },
  };
}

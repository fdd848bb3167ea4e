import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeNatsAuth, writeNatsConf } from './nats-auth.js';
import { natsServerBinary } from './nats-binary.js';
import { launchNats, stopProcess } from './nats-launch.js';
import { type NatsServer, natsServerHandle } from './servers.js';

export type CoreNatsServer = Omit<NatsServer, 'restart' | 'stop'> & { stop(): Promise<void> };

/**
 * Starts a private nats-server WITHOUT JetStream on a free port: the real server a test needs to
 * see what a service does when JetStream is unavailable (no stream, no KV, publishes answered
 * "no responders"). Never the machine's shared server. Same users as startNatsServer's.
 */
export async function startCoreNatsServer(): Promise<CoreNatsServer> {
  const { bin } = await natsServerBinary();
  const auth = makeNatsAuth();
  const portsDir = mkdtempSync(join(tmpdir(), 'herald-nats-core-'));
  const conf = writeNatsConf(portsDir, { jetstream: false });
  const { proc, port } = await launchNats(bin, ['-c', conf], { portsDir, env: auth.serverEnv });
  return natsServerHandle(`nats://127.0.0.1:${port}`, port, auth, {
    async stop() {
      await stopProcess(proc);
      rmSync(portsDir, { recursive: true, force: true });
    },
    async restart() {
      throw new Error('a core nats-server is not restarted');
    },
  });
}

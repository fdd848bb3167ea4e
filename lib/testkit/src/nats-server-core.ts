import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { natsServerBinary } from './nats-binary.js';
import { launchNats, stopProcess } from './nats-launch.js';

export interface CoreNatsServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Starts a private nats-server WITHOUT JetStream on a free port: the real server a test needs to
 * see what a service does when JetStream is unavailable (no stream, no KV, publishes answered
 * "no responders"). Never the machine's shared server.
 */
export async function startCoreNatsServer(): Promise<CoreNatsServer> {
  const { bin } = await natsServerBinary();
  const portsDir = mkdtempSync(join(tmpdir(), 'herald-nats-core-'));
  const { proc, port } = await launchNats(bin, [], { portsDir });
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    async stop() {
      await stopProcess(proc);
      rmSync(portsDir, { recursive: true, force: true });
    },
  };
}

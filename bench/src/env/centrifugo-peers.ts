import type { BenchConfig } from '../config.js';
import type { CentrifugoPeer } from '../figures/context.js';
import { poster } from '../load/http-poster.js';
import { findCentrifugo } from './centrifugo-binary.js';
import { type CentrifugoServer, startCentrifugo } from './centrifugo-server.js';
import type { HeraldStack } from './herald-stack.js';
import type { pinning } from './pinning.js';

/**
 * Centrifugo with the Redis engine and with the memory engine, sized for the deepest backlog the
 * figures drain; none when BENCH_CENTRIFUGO=false or Go is missing (the reason is reported), and
 * an error when Go is here but `make deps-bench` was not run.
 */
export async function startCentrifugoPeers(
  config: BenchConfig,
  pins: ReturnType<typeof pinning>,
  stack: HeraldStack,
  log: (message: string) => void,
): Promise<{ peers: CentrifugoPeer[]; skipped?: string; version: string }> {
  const version = 'unknown';
  if (!config.centrifugo) return { peers: [], skipped: 'BENCH_CENTRIFUGO=false', version };
  const binary = await findCentrifugo();
  if (!binary.found) {
    if (binary.fatal) throw new Error(binary.reason);
    log(`Centrifugo skipped: ${binary.reason}`);
    return { peers: [], skipped: binary.reason, version };
  }
  log(
    `starting Centrifugo v${binary.version} (Redis engine with its own redis-server, memory engine)`,
  );
  const peers: CentrifugoPeer[] = [];
  try {
    for (const engine of ['redis', 'memory'] as const) {
      const server: CentrifugoServer = await startCentrifugo({
        bin: binary.bin,
        engine,
        pinning: pins,
        certs: stack.certs,
        historySize: Math.max(config.drainOne, config.drainEach),
        // The payload plus its publication frame (channel, offset) as it is replayed.
        publicationBytes: config.payloadBytes + 128,
      });
      peers.push({
        engine,
        server,
        api: poster(server.origin, stack.certs.ca, config.concurrency, {
          'x-api-key': server.apiKey,
        }),
      });
    }
  } catch (err) {
    await Promise.all(peers.map((p) => p.server.stop()));
    throw err;
  }
  return { peers, version: binary.version };
}

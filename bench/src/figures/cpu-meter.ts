import type { CentrifugoEngine } from '../env/centrifugo-server.js';
import { cpuSnapshot, type NamedProcess } from '../env/process-cpu.js';
import type { System } from '../report/peers.js';

/**
 * CPU seconds the named server processes use over a measurement window: divided by the work done
 * (deliveries, stored events, accepted connections) it says what each unit of work costs the one
 * server core, which is what a throughput figure on a pinned core comes down to.
 */
export async function meterCpu<T>(
  processes: NamedProcess[],
  names: readonly string[],
  work: () => Promise<T>,
): Promise<{ result: T; cpuSeconds: number; perProcess: Record<string, number> }> {
  const watched = processes.filter((p) => names.includes(p.name));
  const before = await cpuSnapshot(watched);
  const result = await work();
  const after = await cpuSnapshot(watched);
  let cpuSeconds = 0;
  const perProcess: Record<string, number> = {};
  for (const [name, s] of after) {
    const used = s - (before.get(name) ?? s);
    perProcess[name] = used;
    cpuSeconds += used;
  }
  return { result, cpuSeconds, perProcess };
}

/** CPU seconds per process turned into µs per unit of work. */
export function perUnitUs(
  perProcess: Record<string, number>,
  units: number,
): Record<string, number> {
  return Object.fromEntries(
    Object.entries(perProcess).map(([name, s]) => [name, (1e6 * s) / units]),
  );
}

/** The processes of each side, by the names the stack and the baselines give them. */
export const PROCESSES = {
  /** Every server process of Herald as deployed: each figure's work is charged to all of them. */
  herald: ['ingress-api', 'socket-edge', 'auth', 'status', 'nats-server', 'postgres'],
  rawWs: ['baseline raw-ws'],
  socketIo: ['baseline socket.io'],
  nats: ['nats-server'],
  koaJetStream: ['baseline koa-jetstream', 'nats-server'],
  designFloor: ['baseline design-floor', 'baseline raw-ws', 'nats-server'],
  floorDrain: ['baseline raw-ws', 'nats-server'],
  floorStore: ['baseline koa-jetstream', 'nats-server'],
  centrifugoMemory: ['centrifugo (memory)'],
  centrifugoRedis: ['centrifugo (redis)', 'redis-server'],
} as const;

/** Centrifugo's processes for an engine: itself, and its redis-server with the Redis engine. */
export function centrifugoProcesses(engine: CentrifugoEngine): readonly string[] {
  return engine === 'redis' ? PROCESSES.centrifugoRedis : PROCESSES.centrifugoMemory;
}

/** Centrifugo's column in issue 31's table for an engine. */
export function centrifugoSystem(engine: CentrifugoEngine): System {
  return engine === 'redis' ? 'centrifugoRedis' : 'centrifugoMemory';
}

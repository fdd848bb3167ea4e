import { cpuSnapshot, type NamedProcess } from '../env/process-cpu.js';

/**
 * CPU seconds the named server processes use over a measurement window: divided by the work done
 * (deliveries, stored events, accepted connections) it says what each unit of work costs the one
 * server core, which is what a throughput figure on a pinned core comes down to.
 */
export async function meterCpu<T>(
  processes: NamedProcess[],
  names: readonly string[],
  work: () => Promise<T>,
): Promise<{ result: T; cpuSeconds: number }> {
  const watched = processes.filter((p) => names.includes(p.name));
  const before = await cpuSnapshot(watched);
  const result = await work();
  const after = await cpuSnapshot(watched);
  let cpuSeconds = 0;
  for (const [name, s] of after) cpuSeconds += s - (before.get(name) ?? s);
  return { result, cpuSeconds };
}

/** The processes of each side, by the names the stack and the baselines give them. */
export const PROCESSES = {
  herald: ['ingress-api', 'socket-edge', 'nats-server', 'auth'],
  edge: ['socket-edge', 'nats-server', 'auth'],
  rawWs: ['baseline raw-ws'],
  socketIo: ['baseline socket.io'],
  nats: ['nats-server'],
  koaJetStream: ['baseline koa-jetstream', 'nats-server'],
  designFloor: ['baseline design-floor', 'baseline raw-ws', 'nats-server'],
  floorDrain: ['baseline raw-ws', 'nats-server'],
} as const;

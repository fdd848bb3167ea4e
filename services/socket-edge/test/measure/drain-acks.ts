// Measurement (docs/benchmarks-history.md, "Round 4: AckAll bulk acks"); run from the repository
// root with
//   N=10000 ROUNDS=5 node --conditions=herald-source --import tsx services/socket-edge/test/measure/drain-acks.ts
// On one real nats-server and edge (the test fixture): N queued events drained to one herald.v1
// socket (acking each event) without a device and with a first device; per row the median of
// ROUNDS of the time from the connect to the N-th event, the CPU of this process (edge and
// client) and of nats-server over that time, and the consumer's state once settled. Same run for
// both sides of an A/B: the absolute figures depend on the machine.
import { randomUUID } from 'node:crypto';
import { childCpuMs } from '@herald/testkit';
import {
  ACCOUNT_A,
  consumerInfo,
  keys,
  openClient,
  queueMany,
  type Stack,
  startEdge,
  startStack,
  waitUntil,
} from '../fixture.js';

const N = Number(process.env.N ?? 10_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);

const stack: Stack = await startStack();
const edge = await startEdge(stack);

interface Sample {
  ms: number;
  nodeCpu: number;
  natsCpu: number;
}

async function drain(recipient: string, device?: string): Promise<Sample> {
  const q = new URLSearchParams({ api_key: keys.mobileA, recipient, client: 'mobile' });
  if (device) q.set('device', device);
  const cpu0 = process.cpuUsage();
  const nats0 = childCpuMs('nats-server');
  const t0 = performance.now();
  const c = openClient(stack, edge.port, { query: q.toString(), v1: true });
  await waitUntil('every event', () => c.events.length >= N, 120_000);
  const ms = performance.now() - t0;
  // Settled: every event acked on the consumer (the acks are part of the cost).
  await waitUntil(
    'all acked',
    async () => (await consumerInfo(stack, ACCOUNT_A, recipient))?.num_ack_pending === 0,
    60_000,
  );
  const cpu = process.cpuUsage(cpu0);
  const natsCpu = childCpuMs('nats-server') - nats0;
  c.ws.close();
  await c.closed;
  return { ms, nodeCpu: (cpu.user + cpu.system) / 1000, natsCpu };
}

const rows: Record<string, Sample[]> = { 'no device': [], 'first device': [] };
for (let r = 0; r < ROUNDS; r++) {
  const a = randomUUID();
  await queueMany(stack, ACCOUNT_A, a, N);
  rows['no device']?.push(await drain(a));
  const b = randomUUID();
  await queueMany(stack, ACCOUNT_A, b, N);
  rows['first device']?.push(await drain(b, 'phone'));
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? 0;
console.log(`${N} queued events to one socket, median of ${ROUNDS}:`);
console.log('  row            ms to all   edge+client CPU ms   nats-server CPU ms');
for (const [name, xs] of Object.entries(rows))
  console.log(
    `  ${name.padEnd(14)} ${median(xs.map((x) => x.ms))
      .toFixed(0)
      .padStart(9)}   ${median(xs.map((x) => x.nodeCpu))
      .toFixed(0)
      .padStart(18)}   ${median(xs.map((x) => x.natsCpu))
      .toFixed(0)
      .padStart(18)}`,
  );
await edge.close();
await stack.stop();
process.exit(0);

// Measurement (docs/architecture-history.md, "Per-device delivery"); run from the repository root
// with
//   N=200 DEVICES=200 node --conditions=herald-source --import tsx services/socket-edge/test/measure/device-cost.ts
// BATCH=1 connects as the SDK does by default (herald.v1 with `batch=1`: `events` frames, list
// acks); DEVICES=0 skips the storage step.
// On one real nats-server and edge (the test fixture): the KV bytes a device position costs, and
// the time from a connect to its N-th queued event for the recipient's first socket without a
// device (the durable consumer's drain, as before), a first device (drain and catch-up at once),
// and a second device after the first proved everything (catch-up alone: direct gets by subject).
// Same run, so the ratios are what to read; the absolute times depend on the machine.
import { randomUUID } from 'node:crypto';
import { DEVICE_POSITION_BUCKET } from '@herald/queue';
import {
  ACCOUNT_A,
  keys,
  openClient,
  queueMany,
  type Stack,
  startEdge,
  startStack,
  waitUntil,
} from '../fixture.js';

const N = Number(process.env.N ?? 200);
const DEVICES = Number(process.env.DEVICES ?? 200);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const BATCH = process.env.BATCH === '1';

const stack: Stack = await startStack();
const edge = await startEdge(stack);

async function timeToAll(recipient: string, device?: string): Promise<number> {
  const q = new URLSearchParams({ api_key: keys.mobileA, recipient, client: 'mobile' });
  if (device) q.set('device', device);
  if (BATCH) q.set('batch', '1');
  const t0 = performance.now();
  const c = openClient(stack, edge.port, { query: q.toString(), v1: true });
  await waitUntil('every event', () => c.events.length >= N, 60_000);
  const ms = performance.now() - t0;
  c.ws.close();
  await c.closed;
  return ms;
}

const plain: number[] = [];
const first: number[] = [];
const second: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const a = randomUUID();
  await queueMany(stack, ACCOUNT_A, a, N);
  plain.push(await timeToAll(a));
  const b = randomUUID();
  await queueMany(stack, ACCOUNT_A, b, N);
  first.push(await timeToAll(b, 'phone'));
  second.push(await timeToAll(b, 'laptop'));
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? 0;
const base = median(plain);
console.log(
  `${BATCH ? 'batch=1, ' : ''}connect to ${N} queued events, median of ${ROUNDS} (ms, ratio to no device):`,
);
console.log(`  no device (drain):                ${base.toFixed(0)}  1.00`);
for (const [name, xs] of [
  ['first device (drain + catch-up)', first],
  ['second device (catch-up alone)', second],
] as const)
  console.log(`  ${name.padEnd(33)} ${median(xs).toFixed(0)}  ${(median(xs) / base).toFixed(2)}`);

if (DEVICES === 0) {
  await edge.close();
  await stack.stop();
  process.exit(0);
}
// Storage: DEVICES devices of one recipient, each proving one event, each recording a position.
const kvStream = `KV_${DEVICE_POSITION_BUCKET}`;
const before = await stack.jsm.streams.info(kvStream);
const recipient = randomUUID();
await queueMany(stack, ACCOUNT_A, recipient, 1);
for (let d = 0; d < DEVICES; d += 50) {
  const batch = Array.from({ length: Math.min(50, DEVICES - d) }, (_, i) =>
    timeToAllOne(recipient, `device-${d + i}-${'x'.repeat(40)}`),
  );
  await Promise.all(batch);
}
async function timeToAllOne(r: string, device: string): Promise<void> {
  const q = new URLSearchParams({ api_key: keys.mobileA, recipient: r, client: 'mobile', device });
  const c = openClient(stack, edge.port, { query: q.toString(), v1: true });
  await waitUntil('the event', () => c.events.length >= 1, 60_000);
  c.ws.close();
  await c.closed;
}
await waitUntil(
  'every position',
  async () =>
    (await stack.jsm.streams.info(kvStream)).state.messages >= before.state.messages + DEVICES,
  60_000,
);
const after = await stack.jsm.streams.info(kvStream);
const bytes = after.state.bytes - before.state.bytes;
console.log(
  `device positions: ${DEVICES} devices (ids of ~50 chars) took ${bytes} B in ${kvStream}: ${(bytes / DEVICES).toFixed(0)} B per device`,
);
await edge.close();
await stack.stop();

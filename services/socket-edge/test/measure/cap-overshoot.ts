/**
 * Measures how far a burst of simultaneous connects, spread over two edges, can exceed the
 * per-account connection cap, and how long one edge takes to hear of another's count. Not a
 * test (no assertions): the figures in docs/operations.md come from it.
 *
 *   node --conditions=herald-source --import tsx services/socket-edge/test/measure/cap-overshoot.ts
 */
import { randomUUID } from 'node:crypto';
import { CONNECTIONS_BUCKET } from '../../src/admit/connection-counts.js';
import {
  openClient,
  ROOMY_LIMITS,
  type RunningEdge,
  type Stack,
  startEdge,
  startStack,
  verified,
} from '../fixture.js';

const TRIALS = Number(process.env.TRIALS ?? 10);

async function burst(stack: Stack, edges: RunningEdge[], cap: number, perEdge: number) {
  const apiKey = `hk_live_${randomUUID()}`;
  stack.auth.set(
    apiKey,
    verified(randomUUID(), randomUUID(), 'mobile', null, null, {
      limits: { ...ROOMY_LIMITS, connections: cap },
    }),
  );
  const clients = edges.flatMap((edge) =>
    Array.from({ length: perEdge }, () => openClient(stack, edge.port, { apiKey })),
  );
  const opened = await Promise.all(
    clients.map((c) =>
      c.opened.then(
        () => 1,
        () => 0,
      ),
    ),
  );
  const admitted = opened.reduce<number>((a, b) => a + b, 0);
  for (const c of clients) c.ws.terminate();
  return admitted - cap;
}

/** From a count written to the bucket (as another edge would) until this edge counts it. */
async function propagationMs(stack: Stack, to: RunningEdge): Promise<number> {
  const kv = await stack.js.views.kv(CONNECTIONS_BUCKET, { bindOnly: true });
  const account = randomUUID();
  const start = performance.now();
  await kv.put(`${account}.${randomUUID()}`, '1');
  while (to.edge.connectionsSeen(account) !== 1) await new Promise((r) => setImmediate(r));
  return performance.now() - start;
}

const stack = await startStack();
const edges = await Promise.all([startEdge(stack), startEdge(stack)]);
const b = edges[1] as RunningEdge;
const delays: number[] = [];
for (let i = 0; i < TRIALS; i++) delays.push(await propagationMs(stack, b));
delays.sort((x, y) => x - y);
console.log(
  `count propagation (KV put → other edge's view) over ${TRIALS} trials: median ${delays[delays.length >> 1]?.toFixed(2)} ms, max ${delays.at(-1)?.toFixed(2)} ms`,
);
for (const [cap, perEdge] of [
  [5, 10],
  [20, 40],
  [100, 150],
] as const) {
  const overs: number[] = [];
  for (let i = 0; i < TRIALS; i++) overs.push(await burst(stack, edges, cap, perEdge));
  overs.sort((x, y) => x - y);
  console.log(
    `cap ${cap}, ${2 * perEdge} simultaneous connects over 2 edges: overshoot min ${overs[0]}, median ${overs[overs.length >> 1]}, max ${overs.at(-1)} (trials ${TRIALS})`,
  );
}
await Promise.all(edges.map((e) => e.close()));
await stack.stop();

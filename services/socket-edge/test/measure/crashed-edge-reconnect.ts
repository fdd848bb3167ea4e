/**
 * Measures how soon an account at its connection cap gets its sockets back after the edge holding
 * them is killed with -9, through another edge that runs the production settings (edge
 * heartbeats every 500 ms, a dead edge's counts ignored after 1.5 s, counts' TTL 30 s). Each
 * client reconnects as soon as its socket drops and again every RETRY_MS while refused. Not a
 * test (no assertions): the figures in docs/operations.md ("Crashed edge") come from it.
 *
 *   node --conditions=herald-source --import tsx services/socket-edge/test/measure/crashed-edge-reconnect.ts
 *
 * TRIALS (default 10), CAP (sockets the account may hold, default 2), RETRY_MS (default 50).
 */
import { randomUUID } from 'node:crypto';
import {
  expectRefusal,
  openClient,
  ROOMY_LIMITS,
  type Stack,
  startEdge,
  startEdgeProcess,
  startStack,
  verified,
} from '../fixture.js';

const TRIALS = Number(process.env.TRIALS ?? 10);
const CAP = Number(process.env.CAP ?? 2);
const RETRY_MS = Number(process.env.RETRY_MS ?? 50);

/** Connects to `port` until accepted: how long from `since`, and how many 429s it met. */
async function reconnect(stack: Stack, port: number, apiKey: string, since: number) {
  let refused429 = 0;
  for (;;) {
    const client = openClient(stack, port, { apiKey });
    const outcome = await Promise.race([
      client.opened.then(
        () => 'open' as const,
        (err: unknown) => (String(err).includes('429') ? ('429' as const) : ('other' as const)),
      ),
      client.closed.then(() => 'other' as const),
    ]);
    if (outcome === 'open') return { ms: performance.now() - since, refused429, client };
    if (outcome === '429') refused429++;
    if (performance.now() - since > 60_000) throw new Error('no reconnect within 60 s');
    await new Promise((r) => setTimeout(r, RETRY_MS));
  }
}

const stack = await startStack();
const survivor = await startEdge(stack);
const ms: number[] = [];
const refusals: number[] = [];
for (let trial = 0; trial < TRIALS; trial++) {
  const account = randomUUID();
  const apiKey = `hk_live_${randomUUID()}`;
  stack.auth.set(
    apiKey,
    verified(`key-${randomUUID()}`, account, 'mobile', null, null, {
      limits: { ...ROOMY_LIMITS, connections: CAP },
    }),
  );
  const doomed = await startEdgeProcess(stack);
  const held = Array.from({ length: CAP }, () => openClient(stack, doomed.port, { apiKey }));
  await Promise.all(held.map((c) => c.opened));
  while (survivor.edge.connectionsSeen(account) !== CAP)
    await new Promise((r) => setTimeout(r, 10));
  // At its cap: the other edge refuses one more.
  if ((await expectRefusal(stack, survivor.port, { apiKey })).status !== 429) {
    throw new Error('the account was not at its cap before the kill');
  }
  const killed = performance.now();
  await doomed.stop('SIGKILL');
  // Every client reconnects at once, as the SDK does after a 1006.
  const back = await Promise.all(held.map(() => reconnect(stack, survivor.port, apiKey, killed)));
  const last = Math.max(...back.map((b) => b.ms));
  const refused = back.reduce((n, b) => n + b.refused429, 0);
  ms.push(last);
  refusals.push(refused);
  console.log(
    `trial ${trial + 1}: all ${CAP} sockets back ${(last / 1000).toFixed(2)} s after the kill, ${refused} refusals (429) on the way`,
  );
  for (const b of back) b.client.ws.close();
  while (survivor.edge.connectionsSeen(account) !== 0) await new Promise((r) => setTimeout(r, 10));
}
const sorted = [...ms].sort((a, b) => a - b);
const s = (v: number | undefined) => ((v ?? 0) / 1000).toFixed(2);
console.log(
  `cap ${CAP}, ${TRIALS} kills: every socket back after min ${s(sorted[0])} s, median ${s(sorted[sorted.length >> 1])} s, max ${s(sorted.at(-1))} s; 429s met while retrying every ${RETRY_MS} ms: ${Math.min(...refusals)}..${Math.max(...refusals)} per trial`,
);
await survivor.close();
await stack.stop();

/**
 * Measures what a flood of bad-key connects from one address (127.0.0.2) does to a well-behaved
 * client's connects from another (127.0.0.1), on the whole stack (auth over Postgres, one edge),
 * with the per-address connect rate on (the defaults) and off (CONNECT_RATE_PER_S=0 and
 * AUTH_FAIL_LIMIT=0: nothing but the edge's own capacity). Not a test (no assertions): the figures
 * in docs/security.md ("Connect floods") come from it.
 *
 *   node --conditions=herald-source --import tsx services/socket-edge/test/measure/connect-flood.ts
 *
 * FLOOD_CONCURRENCY (flood connects in flight at once, default 64), GOOD (good connects timed
 * one after another, default 100).
 */
import { randomUUID } from 'node:crypto';
import { startStack } from '@herald/testkit';
import WebSocket from 'ws';

const CONCURRENCY = Number(process.env.FLOOD_CONCURRENCY ?? 64);
const GOOD = Number(process.env.GOOD ?? 100);

type Outcome = 'open' | number;

/** One connect; resolves with 'open' (closed again at once) or the HTTP status it was refused with. */
function connectOnce(url: string, ca: string, localAddress: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, [], { ca, localAddress });
    ws.on('open', () => {
      ws.close();
      resolve('open');
    });
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    ws.on('error', () => resolve(0));
  });
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;

async function scenario(name: string, edgeEnv: Record<string, string>) {
  const stack = await startStack({
    services: ['auth', 'socket-edge'],
    env: { 'socket-edge': edgeEnv },
  });
  try {
    const { id } = await stack.createAccount();
    const key = await stack.createKey({ account: id, kind: 'test', client: 'mobile' });
    const url = (apiKey: string) =>
      `${stack.wsUrl}/ws/connect?api_key=${apiKey}&recipient=${randomUUID()}&client=mobile`;
    const timeGood = async () => {
      const ms: number[] = [];
      let refused = 0;
      for (let i = 0; i < GOOD; i++) {
        const t0 = performance.now();
        const outcome = await connectOnce(url(key.key), stack.ca, '127.0.0.1');
        ms.push(performance.now() - t0);
        if (outcome !== 'open') refused++;
      }
      return { ms, refused };
    };
    const quiet = await timeGood();
    let running = true;
    const counts = new Map<Outcome, number>();
    const flooder = async () => {
      while (running) {
        const bad = `hk_live_${randomUUID().replaceAll('-', '')}`;
        const o = await connectOnce(url(bad), stack.ca, '127.0.0.2');
        counts.set(o, (counts.get(o) ?? 0) + 1);
      }
    };
    const floodStart = performance.now();
    const flooders = Array.from({ length: CONCURRENCY }, flooder);
    const flooded = await timeGood();
    running = false;
    await Promise.all(flooders);
    const secs = (performance.now() - floodStart) / 1000;
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    const row = (label: string, r: { ms: number[]; refused: number }) =>
      `${label}: p50 ${pct(r.ms, 50).toFixed(1)} ms, p99 ${pct(r.ms, 99).toFixed(1)} ms, max ${Math.max(...r.ms).toFixed(1)} ms, refused ${r.refused}/${r.ms.length}`;
    console.log(`\n${name}`);
    console.log(`  good client, no flood     ${row('', quiet)}`);
    console.log(`  good client, under flood  ${row('', flooded)}`);
    console.log(
      `  flood: ${total} connects in ${secs.toFixed(1)} s (${(total / secs).toFixed(0)}/s): ` +
        [...counts.entries()].map(([o, n]) => `${o}×${n}`).join(', '),
    );
  } finally {
    await stack.stop();
  }
}

await scenario('connect rate ON (defaults: 50/s, burst 100; AUTH_FAIL_LIMIT 100/min)', {});
await scenario('connect rate OFF (CONNECT_RATE_PER_S=0, AUTH_FAIL_LIMIT=0)', {
  CONNECT_RATE_PER_S: '0',
  AUTH_FAIL_LIMIT: '0',
});

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
 * one after another, one every GOOD_INTERVAL_MS, default 50: 20/s). The flood runs in a process of its own, so the timed client's
 * event loop is not the flood's.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { startStack } from '@herald/testkit';
import WebSocket from 'ws';

const CONCURRENCY = Number(process.env.FLOOD_CONCURRENCY ?? 64);
const GOOD = Number(process.env.GOOD ?? 100);
/** The good client's pace: one connect every this many ms (20/s, well-behaved under the limit). */
const GOOD_INTERVAL_MS = Number(process.env.GOOD_INTERVAL_MS ?? 50);

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
        await new Promise((r) => setTimeout(r, GOOD_INTERVAL_MS));
      }
      return { ms, refused };
    };
    const quiet = await timeGood();
    const flood = spawn(
      process.execPath,
      [...process.execArgv, fileURLToPath(import.meta.url), 'flood', stack.wsUrl, stack.caFile],
      { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env } },
    );
    let report = '';
    flood.stdout.on('data', (c: Buffer) => {
      report += c.toString();
    });
    // Its first line says it is flooding.
    await new Promise<void>((r) => flood.stdout.once('data', () => r()));
    const flooded = await timeGood();
    const exited = new Promise((r) => flood.once('exit', r));
    flood.kill('SIGTERM');
    await exited;
    const { counts, secs } = JSON.parse(report.split('\n').filter(Boolean).pop() ?? '{}') as {
      counts: Record<string, number>;
      secs: number;
    };
    const total = Object.values(counts).reduce((x, y) => x + y, 0);
    const row = (label: string, r: { ms: number[]; refused: number }) =>
      `${label}: p50 ${pct(r.ms, 50).toFixed(1)} ms, p99 ${pct(r.ms, 99).toFixed(1)} ms, max ${Math.max(...r.ms).toFixed(1)} ms, refused ${r.refused}/${r.ms.length}`;
    console.log(`\n${name}`);
    console.log(`  good client, no flood     ${row('', quiet)}`);
    console.log(`  good client, under flood  ${row('', flooded)}`);
    console.log(
      `  flood: ${total} connects in ${secs.toFixed(1)} s (${(total / secs).toFixed(0)}/s): ` +
        Object.entries(counts)
          .map(([o, n]) => `${o === '0' ? 'dropped' : o}×${n}`)
          .join(', '),
    );
  } finally {
    await stack.stop();
  }
}

/** The flood, in its own process: bad-key connects from 127.0.0.2 until SIGTERM. */
async function floodMain(wsUrl: string, caFile: string) {
  const ca = (await import('node:fs')).readFileSync(caFile, 'utf8');
  const counts: Record<string, number> = {};
  const t0 = performance.now();
  let running = true;
  process.once('SIGTERM', () => {
    running = false;
  });
  const flooder = async () => {
    while (running) {
      const bad = `hk_live_${randomUUID().replaceAll('-', '')}`;
      const o = await connectOnce(
        `${wsUrl}/ws/connect?api_key=${bad}&recipient=${randomUUID()}&client=mobile`,
        ca,
        '127.0.0.2',
      );
      counts[String(o)] = (counts[String(o)] ?? 0) + 1;
    }
  };
  console.log('flooding');
  await Promise.all(Array.from({ length: CONCURRENCY }, flooder));
  console.log(JSON.stringify({ counts, secs: (performance.now() - t0) / 1000 }));
}

if (process.argv[2] === 'flood') {
  await floodMain(process.argv[3] ?? '', process.argv[4] ?? '');
  process.exit(0);
}

await scenario('connect rate ON (defaults: 50/s, burst 100; AUTH_FAIL_LIMIT 100/min)', {});
await scenario('connect rate OFF (CONNECT_RATE_PER_S=0, AUTH_FAIL_LIMIT=0)', {
  CONNECT_RATE_PER_S: '0',
  AUTH_FAIL_LIMIT: '0',
});

/**
 * Measures what a flood of garbage keys costs a valid sender, on the whole stack (auth with
 * Postgres, ingress, NATS): the valid sender's median /notify latency alone, then while 3,000
 * random well-formed keys arrive at concurrency 20 from another source address. Prints the ratio.
 * Not a test (no assertions, timings vary with the machine).
 *
 *   node --conditions=herald-source --import tsx services/ingress-api/test/measure/bad-key-flood.ts
 *
 * AUTH_FAIL_LIMIT=0 in the environment turns the per-source limit off, to see the rest alone.
 * The flood runs in a child process, as an attacker would run elsewhere: its own client work then
 * does not delay the valid sender's event loop (the machine's cores are still shared).
 */
import { fork } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import https from 'node:https';
import { fileURLToPath } from 'node:url';
import { startStack } from '@herald/testkit';

const FLOOD_KEYS = Number(process.env.FLOOD_KEYS ?? 3000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 20);
const BASELINE_REQUESTS = Number(process.env.BASELINE_REQUESTS ?? 300);
const FLOOD_SOURCE = '127.0.0.2';

if (process.argv[2] === 'flood') {
  const [baseUrl, ca] = [process.argv[3] ?? '', process.env.FLOOD_CA ?? ''];
  process.send?.('started');
  const statuses = await runFlood(baseUrl, ca);
  process.send?.(Object.fromEntries(statuses));
} else {
  await measure();
}

async function runFlood(baseUrl: string, ca: string): Promise<Map<number, number>> {
  const agent = new https.Agent({
    keepAlive: true,
    maxSockets: CONCURRENCY,
    ca,
    localAddress: FLOOD_SOURCE,
  } as https.AgentOptions);
  const statuses = new Map<number, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < FLOOD_KEYS) {
        next++;
        const bad = `hk_live_${randomBytes(32).toString('base64url').replace(/[-_]/g, 'x').slice(0, 43)}`;
        const { status } = await timed(baseUrl, agent, {
          recipient: randomUUID(),
          payload: { n: 1 },
          api_key: bad,
          client: 'mobile',
        }).catch(() => ({ status: 0 }));
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  agent.destroy();
  return statuses;
}

async function measure(): Promise<void> {
  const ingressEnv: Record<string, string> =
    process.env.AUTH_FAIL_LIMIT === undefined
      ? {}
      : { AUTH_FAIL_LIMIT: process.env.AUTH_FAIL_LIMIT };
  const stack = await startStack({
    services: ['auth', 'ingress-api'],
    env: { 'ingress-api': ingressEnv },
  });
  try {
    const account = await stack.createAccount({ plan: 'startup' });
    const { key } = await stack.createKey({ account: account.id, kind: 'live', client: 'mobile' });
    const validAgent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: stack.ca });

    const valid = () =>
      timed(stack.baseUrl, validAgent, {
        recipient: randomUUID(),
        payload: { n: 1 },
        api_key: key,
        client: 'mobile',
      });
    // Warm up: TLS session, key cache, JetStream paths.
    for (let i = 0; i < 30; i++) await valid();

    const alone: number[] = [];
    for (let i = 0; i < BASELINE_REQUESTS; i++) alone.push((await valid()).ms);

    let flooding = true;
    const child = fork(fileURLToPath(import.meta.url), ['flood', stack.baseUrl], {
      env: { ...process.env, FLOOD_CA: stack.ca },
    });
    let started = false;
    const flood = new Promise<Record<string, number>>((resolve, reject) => {
      child.on('message', (m) => {
        if (m === 'started') started = true;
        else resolve(m as Record<string, number>);
      });
      child.once('exit', (code) => reject(new Error(`flood exited with ${code}`)));
    }).finally(() => {
      flooding = false;
    });
    const during: number[] = [];
    const validStatuses = new Map<number, number>();
    while (flooding) {
      const counted = started;
      const { ms, status } = await valid();
      if (!counted) continue;
      during.push(ms);
      validStatuses.set(status, (validStatuses.get(status) ?? 0) + 1);
    }
    const statuses = await flood;

    const a = median(alone);
    const d = median(during);
    console.log(
      JSON.stringify(
        {
          flood: {
            keys: FLOOD_KEYS,
            concurrency: CONCURRENCY,
            statuses,
          },
          valid_sender: {
            median_ms_alone: round(a),
            median_ms_during_flood: round(d),
            requests_during_flood: during.length,
            statuses_during_flood: Object.fromEntries(validStatuses),
          },
          median_latency_ratio: round(d / a),
          auth_fail_limit: process.env.AUTH_FAIL_LIMIT ?? 'default',
        },
        null,
        2,
      ),
    );
    validAgent.destroy();
  } finally {
    await stack.stop();
  }
}

function timed(
  baseUrl: string,
  agent: https.Agent,
  body: unknown,
): Promise<{ ms: number; status: number }> {
  const data = JSON.stringify(body);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${baseUrl}/notify`,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ ms: performance.now() - started, status: res.statusCode ?? 0 }),
        );
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

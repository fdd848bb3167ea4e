/**
 * Retention benchmark (not a test): one run over 10,000 recipients holding 200,000 stored events,
 * half of them delivered (acked). Reports the run's duration, the NATS server's memory before and
 * after, and events purged per second, once per API rate in BENCH_RETENTION_RATES.
 *
 *   node --conditions=herald-source --import tsx bench/retention.ts
 *
 * Knobs: BENCH_RETENTION_RECIPIENTS (10000), BENCH_RETENTION_EVENTS_EACH (20),
 * BENCH_RETENTION_RATES (comma list of RETENTION_API_RATE values, one full setup and run each;
 * default "100000", effectively unthrottled, which measures what a run costs the server; the
 * service's default, 500, mostly measures the throttle: about calls / 500 seconds).
 *
 * Delivery mix, half the events in all: a quarter of the recipients fully delivered (their
 * consumers are reaped), half with the first half of their queue delivered (purged, consumer
 * kept), a quarter never connected (their consumers cost the run nothing but a list entry).
 * Events are stored round-robin across recipients, so each queue is spread over the whole stream.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventHeaders, subjects } from '@herald/proto';
import {
  ensureQueueStream,
  QueueLayout,
  queueConsumerConfig,
  queueConsumerName,
} from '@herald/queue';
import { freePort, natsServerBinary, REPO_ROOT, waitForPort } from '@herald/testkit';
import {
  type ConsumerConfig,
  connect,
  headers,
  type JetStreamManager,
  type NatsConnection,
} from 'nats';

const RECIPIENTS = Number(process.env.BENCH_RETENTION_RECIPIENTS ?? 10_000);
const EACH = Number(process.env.BENCH_RETENTION_EVENTS_EACH ?? 20);
const RATES = (process.env.BENCH_RETENTION_RATES ?? '100000').split(',').map(Number);
const PAYLOAD = new TextEncoder().encode(JSON.stringify({ kind: 'alert', text: 'x'.repeat(160) }));

interface Server {
  url: string;
  pid: number;
  varz(): Promise<{ mem: number; version: string }>;
  stop(): Promise<void>;
}

async function startServer(): Promise<Server> {
  const { bin } = await natsServerBinary();
  const [port, http] = [await freePort(), await freePort()];
  const store = mkdtempSync(join(tmpdir(), 'herald-bench-retention-'));
  const proc: ChildProcess = spawn(
    bin,
    ['-a', '127.0.0.1', '-p', String(port), '-m', String(http), '-js', '-sd', store],
    { stdio: 'ignore' },
  );
  await waitForPort(port);
  await waitForPort(http);
  return {
    url: `nats://127.0.0.1:${port}`,
    pid: proc.pid ?? 0,
    varz: async () =>
      (await (await fetch(`http://127.0.0.1:${http}/varz`)).json()) as {
        mem: number;
        version: string;
      },
    stop: () =>
      new Promise((resolve) => {
        proc.once('exit', () => {
          rmSync(store, { recursive: true, force: true });
          resolve();
        });
        proc.kill('SIGTERM');
      }),
  };
}

/** Runs `task` over `items` with at most `limit` in flight. */
async function pool<T>(items: T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await task(items[next++] as T);
    }),
  );
}

/** The fields of retention's run-once summary (its JSON on stdout) this benchmark reports. */
interface RunSummary {
  outcome: string;
  reason?: string;
  duration_ms: number;
  recipients_scanned: number;
  events_purged: number;
  consumers_reaped: number;
  api_calls: number;
}

/**
 * One retention pass through its command-line entry (`npm run retention -- run-once`), as an
 * operator runs it: the benchmark depends on no service package, only on the CLI's JSON summary.
 */
function runRetentionOnce(natsUrl: string, rate: number): Promise<RunSummary> {
  return new Promise((resolve, reject) => {
    const proc = spawn('npm', ['run', '-s', 'retention', '--', 'run-once'], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        NATS_URL: natsUrl,
        RETENTION_API_RATE: String(rate),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    proc.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    proc.once('error', reject);
    proc.once('exit', (code) => {
      const line = stdout.trim().split('\n').at(-1) ?? '';
      try {
        resolve(JSON.parse(line) as RunSummary);
      } catch {
        reject(new Error(`retention run-once exited ${code} without a summary: ${stdout}`));
      }
    });
  });
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The services' default layout: run-once runs with the default QUEUE_PARTITIONS too. */
const LAYOUT = new QueueLayout();

/** Messages and consumers over every partition, shaped like one stream's info. */
async function queueState(jsm: JetStreamManager) {
  const state = { messages: 0, bytes: 0, consumer_count: 0 };
  for (const stream of LAYOUT.streams) {
    const info = await jsm.streams.info(stream);
    state.messages += info.state.messages;
    state.bytes += info.state.bytes;
    state.consumer_count += info.state.consumer_count;
  }
  return { state };
}

async function prepare(nc: NatsConnection, account: string, recipients: string[]): Promise<number> {
  const jsm = await nc.jetstreamManager();
  const js = nc.jetstream();
  await ensureQueueStream(jsm, { maxPerRecipient: Math.max(10_000, EACH), layout: LAYOUT });
  const t0 = Date.now();
  const jobs: [string, number][] = [];
  for (let e = 0; e < EACH; e++) for (const r of recipients) jobs.push([r, e]);
  await pool(jobs, 256, async ([r]) => {
    const h = headers();
    h.set(EventHeaders.id, randomUUID());
    h.set(EventHeaders.ts, String(Date.now()));
    await js.publish(subjects.queue(account, r), PAYLOAD, { headers: h });
  });
  const published = Date.now() - t0;
  await pool(recipients, 32, async (r) => {
    await jsm.consumers.add(
      LAYOUT.streamOf(account, r),
      queueConsumerConfig(account, r) as unknown as ConsumerConfig,
    );
  });
  // The delivery mix: quarter full, half half, quarter none.
  await pool(
    recipients.map(
      (r, i) => [r, i % 4 === 0 ? EACH : i % 4 === 3 ? 0 : Math.floor(EACH / 2)] as const,
    ),
    32,
    async ([r, n]) => {
      if (n === 0) return;
      const consumer = await js.consumers.get(
        LAYOUT.streamOf(account, r),
        queueConsumerName(account, r),
      );
      let got = 0;
      while (got < n) {
        for await (const m of await consumer.fetch({ max_messages: n - got, expires: 5000 })) {
          await m.ackAck();
          got++;
        }
      }
    },
  );
  return published;
}

async function measure(rate: number): Promise<Record<string, string | number>> {
  const server = await startServer();
  const nc = await connect({ servers: server.url });
  try {
    const account = randomUUID();
    const recipients = Array.from({ length: RECIPIENTS }, () => randomUUID());
    const t0 = Date.now();
    const publishMs = await prepare(nc, account, recipients);
    const prepMs = Date.now() - t0;
    const jsm = await nc.jetstreamManager();
    const before = await queueState(jsm);
    const memBefore = (await server.varz()).mem;

    const run = await runRetentionOnce(server.url, rate);
    const memAfter = (await server.varz()).mem;
    const after = await queueState(jsm);
    const idle = await runRetentionOnce(server.url, rate);
    if (run.outcome !== 'completed') throw new Error(`run ${run.outcome}: ${run.reason ?? ''}`);
    return {
      'RETENTION_API_RATE (calls/s)': rate,
      'nats-server': (await server.varz()).version,
      'stored before': before.state.messages,
      'consumers before': before.state.consumer_count,
      'run duration': secs(run.duration_ms),
      'recipients scanned': run.recipients_scanned,
      'events purged': run.events_purged,
      'events purged/s': Math.round(run.events_purged / (run.duration_ms / 1000)),
      'consumers reaped': run.consumers_reaped,
      'JetStream API calls': run.api_calls,
      'stored after': after.state.messages,
      'consumers after': after.state.consumer_count,
      'server memory before': mib(memBefore),
      'server memory after': mib(memAfter),
      'stream bytes before → after': `${mib(before.state.bytes)} → ${mib(after.state.bytes)}`,
      'second run (nothing to do)': `${secs(idle.duration_ms)}, ${idle.api_calls} calls`,
      'setup (publish, consumers, deliveries)': `${secs(prepMs)} (publish ${secs(publishMs)})`,
    };
  } finally {
    await nc.close();
    await server.stop();
  }
}

const rows: Record<string, string | number>[] = [];
for (const rate of RATES) {
  process.stderr.write(
    `retention bench: ${RECIPIENTS} recipients × ${EACH} events, API rate ${rate}/s ...\n`,
  );
  rows.push(await measure(rate));
}
const keys = Object.keys(rows[0] ?? {});
const lines = [
  `| | ${rows.map((r) => `rate ${r['RETENTION_API_RATE (calls/s)']}/s`).join(' | ')} |`,
  `|---|${rows.map(() => '---').join('|')}|`,
];
for (const k of keys) lines.push(`| ${k} | ${rows.map((r) => r[k]).join(' | ')} |`);
process.stdout.write(`${lines.join('\n')}\n`);
process.stdout.write(`${JSON.stringify({ recipients: RECIPIENTS, events_each: EACH, rows })}\n`);
process.exit(0);

import { ConfigError, envBool, parseEnv } from '@herald/kit';
import { z } from 'zod';
import {
  cpuList,
  envPairs,
  fraction,
  fractionList,
  int,
  intList,
  pairsOf,
} from './config-fields.js';

/**
 * The figures of docs/benchmarks.md, by number (7: delivery-status webhooks, issue 39; 8: push,
 * issue 40; 9: the Pusher door, issue 41; 10: topics, issue 44).
 */
export const FigureId = z.enum(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
export type FigureId = z.infer<typeof FigureId>;
const ALL_FIGURES = FigureId.options.join(',');

/**
 * Every knob of `make bench`, as environment variables. Unset values take the full-run default, or
 * the smoke default when QUICK=1 (the `make bench QUICK=1` mode CI can run in under 60 s).
 */
export const BenchEnv = z.object({
  /** Smoke mode: one run of each figure at small sizes, no docs update. Default false. */
  QUICK: envBool(false),
  /** Repetitions of each figure; the median is reported. Default 5 (QUICK: 1). */
  BENCH_RUNS: int(1, 50),
  /** Which figures to run, e.g. `1,3`. Default all ten. */
  BENCH_FIGURES: z
    .string()
    .regex(/^([1-9]|10)(,([1-9]|10))*$/, 'must be a comma-separated list of figure numbers 1..10')
    .optional(),
  /** Length of one throughput or latency measurement window, ms. Default 1000 (QUICK: 400). */
  BENCH_MEASURE_MS: int(100, 60_000),
  /** Requests in flight in closed-loop load (HTTP POSTs, NATS requests, JetStream publishes). Default 64. */
  BENCH_CONCURRENCY: int(1, 4096),
  /**
   * Warm-up window of each target before figures 2 and 3's runs (JIT, caches, keep-alive), ms;
   * 0 for none. Default 5000 (QUICK: 300, or BENCH_MEASURE_MS when that is shorter): with 300 ms
   * the first two or three of five runs of figure 3 still cost up to twice the CPU per event of
   * the last ones (docs/benchmarks-history.md, "Issue 11 round").
   */
  BENCH_WARMUP_MS: int(0, 60_000),
  /** Events per `POST /notify/batch` request in figures 2 and 3. Default 100. */
  BENCH_BATCH_SIZE: int(1, 1000),
  /**
   * Batch requests in flight for figure 2's batch row below overload (issue 31: 8); the overload
   * row takes BENCH_CONCURRENCY. Default 8.
   */
  BENCH_BATCH_CONCURRENCY: int(1, 4096),
  /** Issue 31's latency row: events/s sent open-loop to every system (figure 1). Default 500. */
  BENCH_LATENCY_RATE: int(1, 100_000),
  /**
   * Run the Centrifugo baselines (memory and Redis engines). Default true; without Go, where
   * `make deps-bench` cannot build Centrifugo, they are skipped and the report says why.
   */
  BENCH_CENTRIFUGO: envBool(true),
  /**
   * Figure 2 also measures Herald's single and batch rows with the status service paused
   * (SIGSTOP; the records published meanwhile are purged before it resumes), in the same run as
   * with it: what the status pipeline's consumer side costs per event. Default false.
   */
  BENCH_STATUS_OFF: envBool(false),
  /** Payload size in bytes of JSON text (figures 1-4). Default 256. */
  BENCH_PAYLOAD_BYTES: int(64, 65_536),
  /** Loads of figure 1, as fractions of the measured maximum throughput. Default 0.1,0.5,0.8. */
  BENCH_LATENCY_LOADS: fractionList,
  /** Sockets the figure 1 events are spread over. Default 1000, issue 31's setup (QUICK: 20). */
  BENCH_LATENCY_SOCKETS: int(1, 10_000),
  /**
   * Connected recipients of figure 2, one socket each. Default 1000, issue 31's setup (QUICK: 200);
   * more sizes, e.g. 1000,5000, repeat every row at each.
   */
  BENCH_RECIPIENTS: intList(1, 60_000),
  /** Events queued for the single recipient of figure 4a. Default 10000 (QUICK: 500). */
  BENCH_DRAIN_ONE: int(1, 100_000),
  /** Recipients reconnecting at once in figure 4b. Default 500, issue 31's storm (QUICK: 100). */
  BENCH_DRAIN_MANY: int(1, 20_000),
  /** Events queued for each of them. Default 20 (QUICK: 5). */
  BENCH_DRAIN_EACH: int(1, 1000),
  /** Most time one drain may take before it counts as incomplete, ms. Default 15000 (QUICK: 10000). */
  BENCH_DRAIN_TIMEOUT_MS: int(1000, 600_000),
  /**
   * TLS handshakes the load generator keeps in flight while figure 4b's recipients reconnect.
   * Default: all of them at once (BENCH_DRAIN_MANY).
   */
  BENCH_DRAIN_CONNECT_CONCURRENCY: int(1, 20_000),
  /** Idle connection counts at which figure 5 samples memory. Default 5000,15000 (QUICK: 300,600). */
  BENCH_MEMORY_LEVELS: intList(1, 200_000),
  /** Figure 6 stops ramping at this many connections even if the probe stays healthy. Default 30000 (QUICK: 1000). */
  BENCH_CAPACITY_MAX: int(1, 500_000),
  /** Connections added per figure 6 ramp step. Default 5000 (QUICK: 500). */
  BENCH_CAPACITY_STEP: int(1, 100_000),
  /** The probe's p99 above which figure 6 stops, ms. Default 100. */
  BENCH_PROBE_P99_MS: int(1, 60_000),
  /** Probes (1 per second) held at each figure 6 step. Default 3 (QUICK: 1). */
  BENCH_PROBES_PER_STEP: int(1, 600),
  /**
   * Repetitions of the connection ramps (figures 5 and 6). One ramp to ~20k connections on each
   * server costs about 2.5 minutes here (the client's TLS handshakes, ~1.5 ms of CPU each, are the
   * bound), so more do not fit the 10-minute budget. Default 1.
   */
  BENCH_RAMP_RUNS: int(1, 50),
  /** TLS handshakes in flight while ramping connections. Default 64. */
  BENCH_CONNECT_CONCURRENCY: int(1, 20_000),
  /** Loopback source addresses 127.0.0.1..N the clients spread over (ephemeral ports). Default 8. */
  BENCH_SOURCE_ADDRESSES: int(1, 254),
  /** CPUs for every server process (nats-server, Postgres, Herald, baselines). Default 0. */
  BENCH_SERVER_CPUS: cpuList,
  /** CPUs for the load generator (this process). Default 1. */
  BENCH_CLIENT_CPUS: cpuList,
  /** Pin with taskset when it exists. Default true. */
  BENCH_PIN: envBool(true),
  /**
   * How the servers run: `dist`, the production build (`npm run build` of every workspace a service
   * needs, then `node dist/main.js`, as deploy/ runs them; the baselines compiled the same way),
   * rebuilt first when a source is newer than its dist/; `source`, from TypeScript through tsx, as
   * `make dev` runs them. Default dist (QUICK: source, which needs no build).
   */
  BENCH_SERVICES: z.enum(['dist', 'source'], { error: 'must be dist or source' }).optional(),
  /** Write a CPU profile of every Herald service into BENCH_OUT_DIR/profiles. Default false. */
  BENCH_CPU_PROF: envBool(false),
  /** Where the JSON of raw results goes. Default bench/results. */
  BENCH_OUT_DIR: z.string().min(1).default('bench/results'),
  /** Update docs/benchmarks.md with the figures. Default true, false with QUICK=1. */
  BENCH_WRITE_DOCS: z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
    .optional()
    .transform((v) => (v === undefined ? undefined : v === 'true' || v === '1' || v === 'yes')),
  /**
   * The whole run is aborted after this many seconds. Default 2700 (QUICK: 300, as CI sets
   * it): issue 31 added two Centrifugo servers to every figure, batch rows for every baseline and
   * 1,000 sockets per server to figure 1, where the full run took 554 s before.
   */
  BENCH_DEADLINE_S: int(10, 7200),
  /**
   * Extra environment of Herald's socket-edge, `NAME=value` pairs separated by commas (its
   * configuration knobs, for tuning runs; the report's header lists them). Default: none.
   */
  BENCH_EDGE_ENV: envPairs(),
  /** Extra environment of Herald's ingress-api, as BENCH_EDGE_ENV (same form). Default: none. */
  BENCH_INGRESS_ENV: envPairs(),
  /** Extra environment of Herald's status service (its webhook sender's knobs), same form. */
  BENCH_STATUS_ENV: envPairs(),
  /**
   * Figure 7: events stored at once for the webhook endpoint's account, whose `event.queued`
   * webhooks the sender then works off (its throughput). Default 5000 (QUICK: 500).
   */
  BENCH_WEBHOOK_BACKLOG: int(10, 1_000_000),
  /** Figure 7's steady rate for the lag, as a fraction of the backlog's webhooks/s. Default 0.5. */
  BENCH_WEBHOOK_LOAD: fraction,
  /**
   * Longest a figure 7 window waits, after its load, for every status record to be written and
   * every message answered, ms. Default 120000 (QUICK: 20000, so a stuck sender cannot hold the
   * smoke run past its deadline).
   */
  BENCH_WEBHOOK_SETTLE_MS: int(1000, 600_000),
  /**
   * How the status service trusts figure 7's receiver's CA: `extra-ca-certs`, NODE_EXTRA_CA_CERTS
   * (the sender keeps Node's default trust, as a deployment sending to public receivers runs it),
   * or `webhook-ca-file`, WEBHOOK_CA_FILE (the sender names its CAs on every request). Default
   * extra-ca-certs.
   */
  BENCH_WEBHOOK_TRUST: z
    .enum(['extra-ca-certs', 'webhook-ca-file'], {
      error: 'must be extra-ca-certs or webhook-ca-file',
    })
    .default('extra-ca-certs'),
  /**
   * Figure 8: recipients, each with one Web Push subscription, sent one offline event each at once
   * through a `--push-after-ms` key; the status service then pushes them all (its throughput).
   * Default 2000 (QUICK: 200).
   */
  BENCH_PUSH_BACKLOG: int(10, 100_000),
  /** Figure 8's key's `push_after_ms`: how long an unproven event waits before its push, ms. Default 100. */
  BENCH_PUSH_AFTER_MS: int(0, 60_000),
  /**
   * Longest a figure 8 window waits, after its load, for every push to arrive and the status
   * pipeline to settle, ms. Default 120000 (QUICK: 20000).
   */
  BENCH_PUSH_SETTLE_MS: int(1000, 600_000),
  /**
   * How the status service trusts figure 8's push service's CA: `extra-ca-certs`,
   * NODE_EXTRA_CA_CERTS, or `push-ca-file`, PUSH_CA_FILE (as BENCH_WEBHOOK_TRUST). Default
   * extra-ca-certs.
   */
  BENCH_PUSH_TRUST: z
    .enum(['extra-ca-certs', 'push-ca-file'], { error: 'must be extra-ca-certs or push-ca-file' })
    .default('extra-ca-certs'),
  /**
   * Figure 10: members of the offline topic (nobody connected), each fan-out's copies stored;
   * at most the status service's TOPIC_MEMBERS_MAX default. Default 20000 (QUICK: 1000).
   */
  BENCH_TOPIC_MEMBERS: int(1, 100_000),
  /** Figure 10: members of the connected topic, one herald.v1 socket each. Default 1000 (QUICK: 50). */
  BENCH_TOPIC_CONNECTED: int(1, 10_000),
  /** Figure 10: direct `POST /notify` events/s whose p99 is measured with and without a fan-out. Default 200. */
  BENCH_TOPIC_RATE: int(1, 10_000),
  /** Longest figure 10 waits for one fan-out's copies, ms. Default 120000 (QUICK: 20000). */
  BENCH_TOPIC_SETTLE_MS: int(1000, 600_000),
});
export type BenchEnv = z.infer<typeof BenchEnv>;

export interface BenchConfig {
  quick: boolean;
  runs: number;
  rampRuns: number;
  figures: ReadonlySet<FigureId>;
  measureMs: number;
  concurrency: number;
  warmupMs: number;
  batchSize: number;
  batchConcurrency: number;
  latencyRate: number;
  centrifugo: boolean;
  statusOff: boolean;
  payloadBytes: number;
  latencyLoads: number[];
  latencySockets: number;
  recipients: number[];
  drainOne: number;
  drainMany: number;
  drainEach: number;
  drainTimeoutMs: number;
  drainConnectConcurrency: number;
  memoryLevels: number[];
  capacityMax: number;
  capacityStep: number;
  probeP99Ms: number;
  probesPerStep: number;
  connectConcurrency: number;
  sourceAddresses: number;
  serverCpus: string;
  clientCpus: string;
  pin: boolean;
  runtime: 'dist' | 'source';
  cpuProfile: boolean;
  outDir: string;
  writeDocs: boolean;
  deadlineMs: number;
  edgeEnv: Record<string, string>;
  ingressEnv: Record<string, string>;
  statusEnv: Record<string, string>;
  webhookBacklog: number;
  webhookLoad: number;
  webhookSettleMs: number;
  webhookTrust: 'extra-ca-certs' | 'webhook-ca-file';
  pushBacklog: number;
  pushAfterMs: number;
  pushSettleMs: number;
  pushTrust: 'extra-ca-certs' | 'push-ca-file';
  topicMembers: number;
  topicConnected: number;
  topicRate: number;
  topicSettleMs: number;
}

/** Reads the bench knobs; throws one ConfigError naming every bad variable. */
export function loadBenchConfig(
  env: Record<string, string | undefined> = process.env,
): BenchConfig {
  const e = parseEnv('bench', BenchEnv, env);
  const q = e.QUICK;
  const pick = <T>(value: T | undefined, full: T, quick: T): T => value ?? (q ? quick : full);
  const runs = pick(e.BENCH_RUNS, 5, 1);
  const config: BenchConfig = {
    quick: q,
    runs,
    rampRuns: e.BENCH_RAMP_RUNS ?? 1,
    figures: new Set((e.BENCH_FIGURES ?? ALL_FIGURES).split(',').map((f) => FigureId.parse(f))),
    measureMs: pick(e.BENCH_MEASURE_MS, 1000, 400),
    concurrency: e.BENCH_CONCURRENCY ?? 64,
    warmupMs: e.BENCH_WARMUP_MS ?? (q ? Math.min(300, e.BENCH_MEASURE_MS ?? 400) : 5000),
    batchSize: e.BENCH_BATCH_SIZE ?? 100,
    batchConcurrency: e.BENCH_BATCH_CONCURRENCY ?? 8,
    latencyRate: e.BENCH_LATENCY_RATE ?? 500,
    centrifugo: e.BENCH_CENTRIFUGO,
    statusOff: e.BENCH_STATUS_OFF,
    payloadBytes: e.BENCH_PAYLOAD_BYTES ?? 256,
    latencyLoads: e.BENCH_LATENCY_LOADS ?? [0.1, 0.5, 0.8],
    latencySockets: pick(e.BENCH_LATENCY_SOCKETS, 1000, 20),
    recipients: pick(e.BENCH_RECIPIENTS, [1000], [200]),
    drainOne: pick(e.BENCH_DRAIN_ONE, 10_000, 500),
    drainMany: pick(e.BENCH_DRAIN_MANY, 500, 100),
    drainEach: pick(e.BENCH_DRAIN_EACH, 20, 5),
    drainTimeoutMs: pick(e.BENCH_DRAIN_TIMEOUT_MS, 15_000, 10_000),
    drainConnectConcurrency:
      e.BENCH_DRAIN_CONNECT_CONCURRENCY ?? pick(e.BENCH_DRAIN_MANY, 500, 100),
    memoryLevels: pick(e.BENCH_MEMORY_LEVELS, [5000, 15_000], [300, 600]),
    capacityMax: pick(e.BENCH_CAPACITY_MAX, 30_000, 1000),
    capacityStep: pick(e.BENCH_CAPACITY_STEP, 5000, 500),
    probeP99Ms: e.BENCH_PROBE_P99_MS ?? 100,
    probesPerStep: pick(e.BENCH_PROBES_PER_STEP, 3, 1),
    connectConcurrency: e.BENCH_CONNECT_CONCURRENCY ?? 64,
    sourceAddresses: e.BENCH_SOURCE_ADDRESSES ?? 8,
    serverCpus: e.BENCH_SERVER_CPUS ?? '0',
    clientCpus: e.BENCH_CLIENT_CPUS ?? '1',
    pin: e.BENCH_PIN,
    runtime: pick(e.BENCH_SERVICES, 'dist' as const, 'source' as const),
    cpuProfile: e.BENCH_CPU_PROF,
    outDir: e.BENCH_OUT_DIR,
    writeDocs: e.BENCH_WRITE_DOCS ?? !q,
    deadlineMs: pick(e.BENCH_DEADLINE_S, 2700, 300) * 1000,
    edgeEnv: pairsOf(e.BENCH_EDGE_ENV),
    ingressEnv: pairsOf(e.BENCH_INGRESS_ENV),
    statusEnv: pairsOf(e.BENCH_STATUS_ENV),
    webhookBacklog: pick(e.BENCH_WEBHOOK_BACKLOG, 5000, 500),
    webhookLoad: e.BENCH_WEBHOOK_LOAD ?? 0.5,
    webhookSettleMs: pick(e.BENCH_WEBHOOK_SETTLE_MS, 120_000, 20_000),
    webhookTrust: e.BENCH_WEBHOOK_TRUST,
    pushBacklog: pick(e.BENCH_PUSH_BACKLOG, 2000, 200),
    pushAfterMs: e.BENCH_PUSH_AFTER_MS ?? 100,
    pushSettleMs: pick(e.BENCH_PUSH_SETTLE_MS, 120_000, 20_000),
    pushTrust: e.BENCH_PUSH_TRUST,
    topicMembers: pick(e.BENCH_TOPIC_MEMBERS, 20_000, 1000),
    topicConnected: pick(e.BENCH_TOPIC_CONNECTED, 1000, 50),
    topicRate: e.BENCH_TOPIC_RATE ?? 200,
    topicSettleMs: pick(e.BENCH_TOPIC_SETTLE_MS, 120_000, 20_000),
  };
  const problems = crossCheck(config);
  if (problems.length > 0) throw new ConfigError('bench', problems);
  return config;
}

function crossCheck(c: BenchConfig): string[] {
  const problems: string[] = [];
  const sorted = [...c.memoryLevels].sort((a, b) => a - b);
  if (sorted.some((v, i) => v !== c.memoryLevels[i])) {
    problems.push('BENCH_MEMORY_LEVELS: must be in increasing order, e.g. 5000,15000');
  }
  const top = sorted.at(-1) ?? 0;
  if (c.figures.has('5') && c.figures.has('6') && top > c.capacityMax) {
    problems.push(
      `BENCH_MEMORY_LEVELS (${top}): must not exceed BENCH_CAPACITY_MAX (${c.capacityMax}), because figures 5 and 6 share one ramp`,
    );
  }
  if (c.capacityStep > c.capacityMax) {
    problems.push(
      `BENCH_CAPACITY_STEP (${c.capacityStep}): must not exceed BENCH_CAPACITY_MAX (${c.capacityMax})`,
    );
  }
  return problems;
}

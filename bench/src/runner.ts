import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { PushService } from '@herald/testkit';
import { connect } from 'nats';
import { type FigureId, loadBenchConfig } from './config.js';
import { type BaselineServers, startBaselineServers } from './env/baseline-servers.js';
import { ensureBuilt } from './env/build.js';
import { startCentrifugoPeers } from './env/centrifugo-peers.js';
import { extraCaFile } from './env/extra-cas.js';
import { type HeraldStack, startHeraldStack } from './env/herald-stack.js';
import { REPO_ROOT } from './env/node-process.js';
import { pinning } from './env/pinning.js';
import { cpuSnapshot } from './env/process-cpu.js';
import { startWebhookReceiver } from './env/webhook-receiver.js';
import { type BenchContext, DeadlineExceeded, deadlineChecker } from './figures/context.js';
import { FIGURES } from './figures/index.js';
import { clientTls } from './load/client-tls.js';
import { poster } from './load/http-poster.js';
import { SourceAddresses } from './load/source-addresses.js';
import { payloadMaker } from './payload.js';
import {
  commitId,
  loadAverage,
  machine,
  natsServerVersion,
  redisVersion,
} from './report/environment.js';
import { attachProfiles, missedTarget } from './report/profile-attach.js';
import { type ClockWindow, monotonicUs } from './report/profile-top.js';
import type { BenchResults, FigureResult } from './report/results.js';
import { settingsOf, writeResults } from './report/results-file.js';

/** The services the bench starts, whose workspaces `BENCH_SERVICES=dist` builds. */
const SERVICE_DIRS = [
  'services/auth',
  'services/ingress-api',
  'services/socket-edge',
  'services/status',
];

/** Timeout of the load generator's JetStream management calls, ms. */
const JSM_TIMEOUT_MS = 60_000;

const log = (message: string) =>
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/** Runs the selected figures and writes the results; resolves with the process exit status. */
export async function runBench(
  env: Record<string, string | undefined> = process.env,
): Promise<number> {
  const config = loadBenchConfig(env);
  const started = performance.now();
  const loadBefore = await loadAverage();
  const pins = pinning({
    enabled: config.pin,
    serverCpus: config.serverCpus,
    clientCpus: config.clientCpus,
  });
  await pins.pinSelf();
  log(
    `${config.quick ? 'QUICK smoke run' : 'full run'}: figures ${[...config.figures].join(',')}, ${config.runs} runs; load average ${loadBefore}`,
  );
  if (!pins.enabled)
    log('taskset unavailable or BENCH_PIN=false: the load generator and servers share every CPU');
  const cpuProfDir = config.cpuProfile
    ? join(resolve(REPO_ROOT, config.outDir), 'profiles')
    : undefined;

  const cleanups: Array<() => Promise<void>> = [];
  const cleanup = async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  };
  // A last resort should cleanup itself hang: the run is bounded in time whatever happens.
  const watchdog = setTimeout(() => {
    log('watchdog: the run outlived its deadline by 60 s; stopping servers and exiting');
    const giveUp = new Promise((r) => setTimeout(r, 20_000).unref());
    void Promise.race([cleanup(), giveUp]).then(() => process.exit(2));
  }, config.deadlineMs + 60_000);
  watchdog.unref();
  const onSignal = () => {
    log('interrupted: stopping servers');
    void cleanup().then(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    if (config.runtime === 'dist') {
      const built = await ensureBuilt(SERVICE_DIRS, log);
      log(built.length > 0 ? `built ${built.join(', ')}` : 'dist/ is current: nothing to build');
    }
    // Figure 7's receiver first: the status service is started trusting its CA.
    const webhookReceiver = config.figures.has('7') ? await startWebhookReceiver() : undefined;
    if (webhookReceiver) cleanups.push(() => webhookReceiver.stop());
    // Figure 8's push service too: the status service is started trusting its CA.
    const pushService = config.figures.has('8') ? await PushService.start() : undefined;
    if (pushService) cleanups.push(() => pushService.stop());
    // Trusted beside Node's default, as a deployment sending to public receivers runs (or named
    // in WEBHOOK_CA_FILE / PUSH_CA_FILE, as BENCH_WEBHOOK_TRUST / BENCH_PUSH_TRUST say).
    const extraCas = extraCaFile([
      ...(webhookReceiver && config.webhookTrust === 'extra-ca-certs'
        ? [webhookReceiver.caFile]
        : []),
      ...(pushService && config.pushTrust === 'extra-ca-certs' ? [pushService.caFile] : []),
    ]);
    log(
      `starting nats-server, Postgres and Herald (auth, ingress-api, socket-edge, status) ${config.runtime === 'dist' ? 'from dist/ (node)' : 'from source (tsx)'}`,
    );
    const stack: HeraldStack = await startHeraldStack({
      pinning: pins,
      runtime: config.runtime,
      env: {
        'socket-edge': {
          MAX_SOCKETS: String(Math.max(50_000, config.capacityMax * 2)),
          // Every bench client connects from 127.0.0.1: the per-address connect rate is off.
          CONNECT_RATE_PER_S: '0',
          ...config.edgeEnv,
        },
        'ingress-api': {
          // Figure 10 stores a copy for every member of its offline topics, run after run (up to
          // BENCH_TOPIC_MEMBERS each): above QUEUE_MAX_RECIPIENTS' default (50,000) the queue
          // would refuse the copies of new recipients (507, status failed), and the figure would
          // measure the ceiling instead of the fan-out.
          QUEUE_MAX_RECIPIENTS: String(10_000_000),
          ...config.ingressEnv,
        },
        status: {
          // As deployed: webhook secrets are sealed with a key of the status service's own.
          WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
          // The receiver and the push service are on loopback, behind CAs of their own, as
          // `make dev`'s would be.
          ...(webhookReceiver ? { WEBHOOK_ALLOW_PRIVATE: 'true' } : {}),
          ...(webhookReceiver && config.webhookTrust === 'webhook-ca-file'
            ? { WEBHOOK_CA_FILE: webhookReceiver.caFile }
            : {}),
          ...(pushService ? { PUSH_ALLOW_PRIVATE: 'true' } : {}),
          ...(pushService && config.pushTrust === 'push-ca-file'
            ? { PUSH_CA_FILE: pushService.caFile }
            : {}),
          ...(extraCas ? { NODE_EXTRA_CA_CERTS: extraCas } : {}),
          ...config.statusEnv,
        },
      },
      ...(cpuProfDir ? { cpuProfDir } : {}),
    });
    cleanups.push(() => stack.stop());
    log('starting the baselines (raw ws, Socket.IO, NATS responder, koa + JetStream)');
    const baselines: BaselineServers = await startBaselineServers({
      pinning: pins,
      certs: stack.certs,
      natsLogin: stack.natsLogin,
      runtime: config.runtime,
      ...(cpuProfDir ? { cpuProfDir } : {}),
    });
    cleanups.push(() => baselines.stop());
    const {
      peers: centrifugo,
      skipped: centrifugoSkipped,
      version: centrifugoVersion,
    } = await startCentrifugoPeers(config, pins, stack, log);
    for (const p of centrifugo) cleanups.push(() => p.server.stop());
    cleanups.push(async () => {
      await Promise.all(centrifugo.map((p) => p.api.close()));
    });
    const nc = await connect({
      ...stack.natsLogin,
      name: 'bench-load-generator',
      // The same client setting as the services, so baselines and Herald pay the same per request.
      noAsyncTraces: true,
    });
    cleanups.push(() => nc.close());
    const http = {
      ingress: poster(stack.baseUrl, stack.certs.ca, config.concurrency),
      rawWs: poster(baselines.rawWsOrigin, stack.certs.ca, config.concurrency),
      socketIo: poster(baselines.socketIoOrigin, stack.certs.ca, config.concurrency),
      koaJetStream: poster(baselines.koaJetStreamOrigin, stack.certs.ca, config.concurrency),
      designFloor: poster(baselines.designFloorOrigin, stack.certs.ca, config.concurrency),
    };
    cleanups.push(async () => {
      await Promise.all(Object.values(http).map((p) => p.close()));
    });
    const ctx: BenchContext = {
      config,
      stack,
      baselines,
      centrifugo,
      ...(centrifugoSkipped ? { centrifugoSkipped } : {}),
      ...(webhookReceiver ? { webhookReceiver } : {}),
      ...(pushService ? { pushService } : {}),
      servers: [
        ...stack.processes,
        ...baselines.processes,
        ...centrifugo.flatMap((p) => p.server.processes),
      ],
      addresses: new SourceAddresses(config.sourceAddresses),
      tls: clientTls(stack.certs.ca),
      payload: payloadMaker(config.payloadBytes),
      nc,
      js: nc.jetstream(),
      // Deleting a stream that holds thousands of durable consumers (figure 4's reset) takes
      // seconds; the default 5 s API timeout would fail the run for it.
      jsm: await nc.jetstreamManager({ timeout: JSM_TIMEOUT_MS }),
      http,
      log,
      checkDeadline: deadlineChecker(config.deadlineMs),
    };

    const servers = ctx.servers;
    if (cpuProfDir) {
      // Profiles are named by pid; this says which server each pid was.
      writeFileSync(join(cpuProfDir, 'processes.json'), `${JSON.stringify(servers, null, 2)}\n`);
    }
    const figures: FigureResult[] = [];
    /** Each figure's span on the monotonic clock, to read its part of the CPU profiles. */
    const windows = new Map<FigureResult, ClockWindow>();
    let stoppedEarly: string | undefined;
    for (const figure of FIGURES) {
      if (!figure.ids.some((id) => config.figures.has(id))) continue;
      log(`figure ${figure.ids.join(' and ')}: ${figure.title}`);
      const t0 = performance.now();
      const fromUs = monotonicUs();
      const cpuBefore = await cpuSnapshot(servers);
      let produced: FigureResult[];
      try {
        ctx.checkDeadline();
        produced = await figure.run(ctx);
      } catch (err) {
        if (!(err instanceof DeadlineExceeded)) throw err;
        // What was measured so far is still worth writing down; the report says what is missing.
        stoppedEarly = `${err.message}: figure ${figure.ids.join(' and ')} and those after it were not measured`;
        log(stoppedEarly);
        break;
      }
      const note = cpuNote(cpuBefore, await cpuSnapshot(servers), performance.now() - t0);
      const toUs = monotonicUs();
      for (const f of produced) {
        f.notes.push(note);
        windows.set(f, { fromUs, toUs });
      }
      figures.push(...produced);
      log(
        `figure ${figure.ids.join(' and ')}: done in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
      );
    }
    if (cpuProfDir && figures.some(missedTarget)) {
      // The servers write their profiles as they exit: stop them first, then read each missed
      // figure's span of them.
      await cleanup();
      attachProfiles(cpuProfDir, figures, windows, log);
    }
    const results: BenchResults = {
      meta: {
        date: new Date().toISOString(),
        commit: await commitId(REPO_ROOT),
        quick: config.quick,
        runs: config.runs,
        rampRuns: config.rampRuns,
        node: process.version,
        natsServer: await natsServerVersion(),
        centrifugo: centrifugoSkipped
          ? `skipped: ${centrifugoSkipped}`
          : `v${centrifugoVersion} (memory and Redis engines; redis-server ${await redisVersion()})`,
        machine: machine(),
        loadBefore,
        loadAfter: await loadAverage(),
        pinning: pins.enabled
          ? [
              `load generator (pid ${process.pid}) → CPU ${pins.clientCpus}`,
              ...stack.pinned,
              ...baselines.pinned,
              ...centrifugo.flatMap((p) => p.server.pinned),
            ]
          : ['none'],
        settings: settingsOf(config),
        elapsedMs: performance.now() - started,
        ...(stoppedEarly === undefined ? {} : { stoppedEarly }),
      },
      figures,
    };
    writeResults(config, results, log);
    return stoppedEarly === undefined ? 0 : 3;
  } finally {
    await cleanup();
    clearTimeout(watchdog);
  }
}

/** Where the server CPU's time went during a figure: each process's CPU seconds. */
function cpuNote(before: Map<string, number>, after: Map<string, number>, wallMs: number): string {
  const used = [...after.entries()]
    .map(([name, s]) => [name, s - (before.get(name) ?? Number.NaN)] as const)
    .filter(([, s]) => Number.isFinite(s) && s >= 0.05)
    .sort((a, b) => b[1] - a[1])
    .map(([name, s]) => `${name} ${s.toFixed(1)} s`);
  return `CPU time of the server processes over the figure's ${(wallMs / 1000).toFixed(0)} s (one server core): ${used.join(', ') || 'none measurable'}.`;
}

export type { FigureId };

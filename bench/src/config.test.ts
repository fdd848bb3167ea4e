import { describe, expect, it } from 'vitest';
import { loadBenchConfig } from './config.js';

describe('loadBenchConfig', () => {
  it('defaults to the full run: 5 runs of every figure (one connection ramp) at the sizes of the issue', () => {
    const c = loadBenchConfig({});
    expect(c).toMatchObject({
      quick: false,
      runs: 5,
      rampRuns: 1,
      payloadBytes: 256,
      latencyLoads: [0.1, 0.5, 0.8],
      recipients: [1000],
      drainOne: 10_000,
      drainMany: 500,
      drainEach: 20,
      memoryLevels: [5000, 15_000],
      probeP99Ms: 100,
      serverCpus: '0',
      clientCpus: '1',
      writeDocs: true,
      deadlineMs: 2_700_000,
      batchSize: 100,
      batchConcurrency: 8,
      latencyRate: 500,
      latencySockets: 1000,
      centrifugo: true,
      runtime: 'dist',
    });
    expect([...c.figures]).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
    expect(c).toMatchObject({
      topicMembers: 20_000,
      topicConnected: 1000,
      topicRate: 200,
      topicSettleMs: 120_000,
    });
    expect(c).toMatchObject({
      pushBacklog: 2000,
      pushAfterMs: 100,
      pushSettleMs: 120_000,
      pushTrust: 'extra-ca-certs',
    });
    expect(c).toMatchObject({
      webhookBacklog: 5000,
      webhookLoad: 0.5,
      webhookSettleMs: 120_000,
      webhookTrust: 'extra-ca-certs',
      statusEnv: {},
    });
  });

  it('QUICK=1 shrinks every size, runs once, leaves the docs alone and must end within 300 s', () => {
    const c = loadBenchConfig({ QUICK: '1' });
    expect(c).toMatchObject({ quick: true, runs: 1, writeDocs: false, deadlineMs: 300_000 });
    // The smoke run needs no build: it runs the servers from source.
    expect(c.runtime).toBe('source');
    expect(loadBenchConfig({ QUICK: '1', BENCH_SERVICES: 'dist' }).runtime).toBe('dist');
    expect(c.recipients).toEqual([200]);
    // The smoke run measures every figure, the webhooks' too, at small sizes.
    expect([...c.figures]).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
    expect(c).toMatchObject({ topicMembers: 1000, topicConnected: 50, topicSettleMs: 20_000 });
    expect(c.webhookBacklog).toBe(500);
    expect(c).toMatchObject({ pushBacklog: 200, pushAfterMs: 100, pushSettleMs: 20_000 });
    expect(c.webhookSettleMs).toBe(20_000);
  });

  it('lets every knob be set explicitly, in either mode', () => {
    const c = loadBenchConfig({
      QUICK: '1',
      BENCH_RUNS: '3',
      BENCH_FIGURES: '2,4',
      BENCH_RECIPIENTS: '10,20',
      BENCH_LATENCY_LOADS: '0.25,.75',
      BENCH_WRITE_DOCS: 'true',
      BENCH_RAMP_RUNS: '2',
    });
    expect(c.runs).toBe(3);
    expect(c.rampRuns).toBe(2);
    expect([...c.figures]).toEqual(['2', '4']);
    expect(c.recipients).toEqual([10, 20]);
    expect(
      loadBenchConfig({ BENCH_CENTRIFUGO: 'false', BENCH_BATCH_CONCURRENCY: '16' }),
    ).toMatchObject({ centrifugo: false, batchConcurrency: 16 });
    expect(c.latencyLoads).toEqual([0.25, 0.75]);
    expect(c.writeDocs).toBe(true);
  });

  it('names each bad variable and what it should be', () => {
    expect(() => loadBenchConfig({ BENCH_RUNS: '0', BENCH_FIGURES: '11' })).toThrow(
      /BENCH_RUNS \("0"\): must be at least 1[\s\S]*BENCH_FIGURES \("11"\): must be a comma-separated list of figure numbers 1\.\.10/,
    );
    expect([...loadBenchConfig({ BENCH_FIGURES: '7' }).figures]).toEqual(['7']);
    expect([...loadBenchConfig({ BENCH_FIGURES: '8' }).figures]).toEqual(['8']);
    expect([...loadBenchConfig({ BENCH_FIGURES: '9' }).figures]).toEqual(['9']);
    expect(() => loadBenchConfig({ BENCH_FIGURES: '0' })).toThrow(/figure numbers 1\.\.10/);
    expect(() => loadBenchConfig({ BENCH_LATENCY_LOADS: '0.5,1.5' })).toThrow(
      /BENCH_LATENCY_LOADS/,
    );
    expect(() => loadBenchConfig({ BENCH_SERVER_CPUS: 'all' })).toThrow(/taskset CPU list/);
  });

  it('holds limits at their edges', () => {
    expect(loadBenchConfig({ BENCH_RUNS: '50' }).runs).toBe(50);
    expect(() => loadBenchConfig({ BENCH_RUNS: '51' })).toThrow(/at most 50/);
    expect(loadBenchConfig({ BENCH_PAYLOAD_BYTES: '64' }).payloadBytes).toBe(64);
    expect(() => loadBenchConfig({ BENCH_PAYLOAD_BYTES: '63' })).toThrow(/at least 64/);
    expect(loadBenchConfig({ BENCH_DEADLINE_S: '10' }).deadlineMs).toBe(10_000);
    expect(() => loadBenchConfig({ BENCH_DEADLINE_S: '9' })).toThrow(/BENCH_DEADLINE_S/);
    expect(loadBenchConfig({}).warmupMs).toBe(5000);
    expect(loadBenchConfig({ QUICK: '1' }).warmupMs).toBe(300);
    expect(loadBenchConfig({ QUICK: '1', BENCH_MEASURE_MS: '200' }).warmupMs).toBe(200);
    expect(loadBenchConfig({ BENCH_WARMUP_MS: '0' }).warmupMs).toBe(0);
    expect(loadBenchConfig({ BENCH_WARMUP_MS: '60000' }).warmupMs).toBe(60_000);
    expect(() => loadBenchConfig({ BENCH_WARMUP_MS: '60001' })).toThrow(/at most 60000/);
    expect(() => loadBenchConfig({ BENCH_WARMUP_MS: '-1' })).toThrow(/BENCH_WARMUP_MS/);
    expect(loadBenchConfig({ BENCH_BATCH_SIZE: '1' }).batchSize).toBe(1);
    expect(loadBenchConfig({ BENCH_BATCH_SIZE: '1000' }).batchSize).toBe(1000);
    expect(() => loadBenchConfig({ BENCH_BATCH_SIZE: '0' })).toThrow(/at least 1/);
    expect(() => loadBenchConfig({ BENCH_BATCH_SIZE: '1001' })).toThrow(/at most 1000/);
    expect(loadBenchConfig({ BENCH_SERVICES: 'source' }).runtime).toBe('source');
    expect(loadBenchConfig({ BENCH_WEBHOOK_BACKLOG: '10' }).webhookBacklog).toBe(10);
    expect(loadBenchConfig({ BENCH_WEBHOOK_BACKLOG: '1000000' }).webhookBacklog).toBe(1_000_000);
    expect(() => loadBenchConfig({ BENCH_WEBHOOK_BACKLOG: '9' })).toThrow(/at least 10/);
    expect(() => loadBenchConfig({ BENCH_WEBHOOK_BACKLOG: '1000001' })).toThrow(/at most 1000000/);
    expect(loadBenchConfig({ BENCH_WEBHOOK_LOAD: '.25' }).webhookLoad).toBe(0.25);
    expect(loadBenchConfig({ BENCH_WEBHOOK_SETTLE_MS: '1000' }).webhookSettleMs).toBe(1000);
    expect(loadBenchConfig({ BENCH_WEBHOOK_SETTLE_MS: '600000' }).webhookSettleMs).toBe(600_000);
    expect(() => loadBenchConfig({ BENCH_WEBHOOK_SETTLE_MS: '999' })).toThrow(/at least 1000/);
    expect(loadBenchConfig({ BENCH_WEBHOOK_TRUST: 'webhook-ca-file' }).webhookTrust).toBe(
      'webhook-ca-file',
    );
    expect(() => loadBenchConfig({ BENCH_WEBHOOK_TRUST: 'system' })).toThrow(
      /BENCH_WEBHOOK_TRUST \("system"\): must be extra-ca-certs or webhook-ca-file/,
    );
    expect(() => loadBenchConfig({ BENCH_WEBHOOK_SETTLE_MS: '600001' })).toThrow(/at most 600000/);
    expect(loadBenchConfig({ BENCH_PUSH_BACKLOG: '10' }).pushBacklog).toBe(10);
    expect(loadBenchConfig({ BENCH_PUSH_BACKLOG: '100000' }).pushBacklog).toBe(100_000);
    expect(() => loadBenchConfig({ BENCH_PUSH_BACKLOG: '9' })).toThrow(
      /BENCH_PUSH_BACKLOG \("9"\): must be at least 10/,
    );
    expect(() => loadBenchConfig({ BENCH_PUSH_BACKLOG: '100001' })).toThrow(/at most 100000/);
    expect(loadBenchConfig({ BENCH_PUSH_AFTER_MS: '0' }).pushAfterMs).toBe(0);
    expect(loadBenchConfig({ BENCH_PUSH_AFTER_MS: '60000' }).pushAfterMs).toBe(60_000);
    expect(() => loadBenchConfig({ BENCH_PUSH_AFTER_MS: '-1' })).toThrow(/BENCH_PUSH_AFTER_MS/);
    expect(() => loadBenchConfig({ BENCH_PUSH_AFTER_MS: '60001' })).toThrow(/at most 60000/);
    expect(loadBenchConfig({ BENCH_PUSH_SETTLE_MS: '1000' }).pushSettleMs).toBe(1000);
    expect(loadBenchConfig({ BENCH_PUSH_SETTLE_MS: '600000' }).pushSettleMs).toBe(600_000);
    expect(() => loadBenchConfig({ BENCH_PUSH_SETTLE_MS: '999' })).toThrow(
      /BENCH_PUSH_SETTLE_MS \("999"\): must be at least 1000/,
    );
    expect(() => loadBenchConfig({ BENCH_PUSH_SETTLE_MS: '600001' })).toThrow(/at most 600000/);
    expect(loadBenchConfig({ BENCH_PUSH_TRUST: 'push-ca-file' }).pushTrust).toBe('push-ca-file');
    expect(() => loadBenchConfig({ BENCH_PUSH_TRUST: 'webhook-ca-file' })).toThrow(
      /BENCH_PUSH_TRUST \("webhook-ca-file"\): must be extra-ca-certs or push-ca-file/,
    );
    for (const bad of ['0', '1', '1.5', '0.5,0.6'])
      expect(() => loadBenchConfig({ BENCH_WEBHOOK_LOAD: bad })).toThrow(/BENCH_WEBHOOK_LOAD/);
    expect(() => loadBenchConfig({ BENCH_SERVICES: 'tsx' })).toThrow(
      /BENCH_SERVICES \("tsx"\): must be dist or source/,
    );
  });

  it('refuses memory levels out of order, or above the ramp they share with figure 6', () => {
    expect(() => loadBenchConfig({ BENCH_MEMORY_LEVELS: '15000,5000' })).toThrow(
      /increasing order/,
    );
    expect(() =>
      loadBenchConfig({ BENCH_MEMORY_LEVELS: '5000,40000', BENCH_CAPACITY_MAX: '30000' }),
    ).toThrow(/must not exceed BENCH_CAPACITY_MAX/);
    expect(
      loadBenchConfig({
        BENCH_FIGURES: '5',
        BENCH_MEMORY_LEVELS: '40000',
        BENCH_CAPACITY_MAX: '30000',
      }).memoryLevels,
    ).toEqual([40_000]);
    expect(() => loadBenchConfig({ BENCH_CAPACITY_STEP: '40000' })).toThrow(/BENCH_CAPACITY_STEP/);
  });

  it('opens figure 4b all at once by default, and takes a bound on its handshakes in flight', () => {
    expect(loadBenchConfig({}).drainConnectConcurrency).toBe(500);
    expect(loadBenchConfig({ QUICK: '1' }).drainConnectConcurrency).toBe(100);
    expect(loadBenchConfig({ BENCH_DRAIN_MANY: '2000' }).drainConnectConcurrency).toBe(2000);
    expect(loadBenchConfig({ BENCH_DRAIN_CONNECT_CONCURRENCY: '1' }).drainConnectConcurrency).toBe(
      1,
    );
    expect(
      loadBenchConfig({ BENCH_DRAIN_CONNECT_CONCURRENCY: '20000' }).drainConnectConcurrency,
    ).toBe(20_000);
    for (const bad of ['0', '20001'])
      expect(() => loadBenchConfig({ BENCH_DRAIN_CONNECT_CONCURRENCY: bad })).toThrow(
        /BENCH_DRAIN_CONNECT_CONCURRENCY/,
      );
  });

  it('passes BENCH_EDGE_ENV to the edge as NAME=value pairs, and refuses anything else', () => {
    expect(loadBenchConfig({}).edgeEnv).toEqual({});
    expect(
      loadBenchConfig({ BENCH_EDGE_ENV: 'QUEUE_BATCH=32,LISTEN_BACKLOG=511' }).edgeEnv,
    ).toEqual({ QUEUE_BATCH: '32', LISTEN_BACKLOG: '511' });
    for (const bad of ['QUEUE_BATCH', 'queue_batch=1', 'A=1,,B=2'])
      expect(() => loadBenchConfig({ BENCH_EDGE_ENV: bad })).toThrow(/BENCH_EDGE_ENV/);
  });

  it('passes BENCH_STATUS_ENV to the status service the same way', () => {
    expect(loadBenchConfig({ BENCH_STATUS_ENV: 'WEBHOOK_CONCURRENCY=8' }).statusEnv).toEqual({
      WEBHOOK_CONCURRENCY: '8',
    });
    expect(() => loadBenchConfig({ BENCH_STATUS_ENV: 'x=1' })).toThrow(/BENCH_STATUS_ENV/);
  });

  it('passes BENCH_INGRESS_ENV to ingress-api the same way', () => {
    expect(loadBenchConfig({}).ingressEnv).toEqual({});
    expect(loadBenchConfig({ BENCH_INGRESS_ENV: 'LIVE_PROOF_WAIT_MS=1000' }).ingressEnv).toEqual({
      LIVE_PROOF_WAIT_MS: '1000',
    });
    expect(() => loadBenchConfig({ BENCH_INGRESS_ENV: 'LIVE_PROOF_WAIT_MS' })).toThrow(
      /BENCH_INGRESS_ENV/,
    );
  });

  it('bounds figure 10 (topics) at its edges', () => {
    expect([...loadBenchConfig({ BENCH_FIGURES: '10' }).figures]).toEqual(['10']);
    expect([...loadBenchConfig({ BENCH_FIGURES: '9,10' }).figures]).toEqual(['9', '10']);
    expect(() => loadBenchConfig({ BENCH_FIGURES: '11' })).toThrow(/figure numbers 1\.\.10/);
    expect(() => loadBenchConfig({ BENCH_FIGURES: '0' })).toThrow(/figure numbers 1\.\.10/);
    const edges: Array<[string, keyof ReturnType<typeof loadBenchConfig>, number, number]> = [
      ['BENCH_TOPIC_MEMBERS', 'topicMembers', 1, 100_000],
      ['BENCH_TOPIC_CONNECTED', 'topicConnected', 1, 10_000],
      ['BENCH_TOPIC_RATE', 'topicRate', 1, 10_000],
      ['BENCH_TOPIC_SETTLE_MS', 'topicSettleMs', 1000, 600_000],
    ];
    for (const [name, field, min, max] of edges) {
      expect(loadBenchConfig({ [name]: String(min) })[field]).toBe(min);
      expect(loadBenchConfig({ QUICK: '1', [name]: String(max) })[field]).toBe(max);
      expect(() => loadBenchConfig({ [name]: String(min - 1) })).toThrow(
        new RegExp(`${name} \\("${min - 1}"\\): must be at least ${min}`),
      );
      expect(() => loadBenchConfig({ [name]: String(max + 1) })).toThrow(
        new RegExp(`${name} .*at most ${max}`),
      );
    }
  });
});

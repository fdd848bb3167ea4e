import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import type http from 'node:http';
import { createInterface } from 'node:readline';
import {
  closeServer,
  createLogger,
  createServer,
  listen,
  type OpsServer,
  startOpsServer,
} from '@herald/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { REPO_ROOT } from '../src/dev-env.js';
import { createRetention, type Retention } from '../src/index.js';
import { FakeClock } from './support/fake-clock.js';
import { deliver, dispatchMany, layout, uuid } from './support/queue-fixture.js';
import { type RetentionFixture, startRetentionFixture } from './support/retention-fixture.js';

let f: RetentionFixture;
beforeAll(async () => {
  f = await startRetentionFixture();
});
afterAll(async () => {
  await f?.close();
});

describe('ops endpoints', () => {
  let retention: Retention;
  let server: http.Server;
  let base: string;
  let ops: OpsServer;
  let opsBase: string;
  beforeAll(async () => {
    const config = loadConfig({
      ...f.server.env('retention'),
      TLS_DISABLED: 'true',
      QUEUE_DEPTH_INTERVAL_MS: '0',
      LOG_LEVEL: 'silent',
    });
    // Wednesday noon UTC: the default schedule's next run is Sunday 03:00 UTC.
    const clock = new FakeClock(new Date('2026-01-07T12:00:00Z'));
    retention = createRetention(config, {
      nc: f.nc,
      logger: createLogger('retention', 'silent'),
      clock,
    });
    server = createServer(config, retention.handler);
    base = `http://127.0.0.1:${await listen(server, 0, '127.0.0.1')}`;
    ops = await startOpsServer({ ...config, OPS_PORT: 0 }, retention.opsHandler);
    opsBase = `http://127.0.0.1:${ops.port}`;
  });
  afterAll(async () => {
    await retention?.close();
    if (server) await closeServer(server);
    await ops?.close();
  });

  it('answers /healthz and /readyz (checks on the ops listener only), and 404 elsewhere', async () => {
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
    expect((await fetch(`${base}/metrics`)).status).toBe(404);
    const opsReady = await fetch(`${opsBase}/readyz`);
    expect(await opsReady.json()).toEqual({ status: 'ready', checks: { nats: true } });
    const other = await fetch(`${base}/notify`);
    expect(other.status).toBe(404);
    expect(((await other.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('exposes the last run, the next scheduled run and queue depth per account in /metrics', async () => {
    const [a1, a2] = [uuid(), uuid()];
    const [r1, r2, r3] = [uuid(), uuid(), uuid()];
    await dispatchMany(f.nc, a1, r1, 3);
    await dispatchMany(f.nc, a1, r2, 1);
    await dispatchMany(f.nc, a2, r3, 2);
    await deliver(f.nc, f.jsm, a2, r3, 2);
    retention.start();
    const summary = await retention.runOnce();
    expect(summary).toMatchObject({ outcome: 'completed', events_purged: 2, consumers_reaped: 1 });

    const text = await (await fetch(`${opsBase}/metrics`)).text();
    const value = (line: string) => {
      const m = text.split('\n').find((l) => l.startsWith(line));
      if (!m) throw new Error(`no metric line starting ${line}`);
      return Number(m.slice(m.lastIndexOf(' ') + 1));
    };
    expect(value('herald_retention_runs_total{outcome="completed"')).toBe(1);
    expect(value('herald_retention_last_run_purged_events')).toBe(2);
    expect(value('herald_retention_last_run_reaped_consumers')).toBe(1);
    expect(value('herald_retention_last_run_errors')).toBe(0);
    expect(value('herald_retention_last_run_duration_seconds')).toBe(summary.duration_ms / 1000);
    expect(value('herald_retention_last_run_end_timestamp_seconds')).toBe(
      Date.parse(summary.finished_at) / 1000,
    );
    expect(value('herald_retention_last_success_timestamp_seconds')).toBe(
      Date.parse(summary.finished_at) / 1000,
    );
    expect(value('herald_retention_next_run_timestamp_seconds')).toBe(
      Date.parse('2026-01-11T03:00:00Z') / 1000,
    );
    expect(value(`herald_queue_depth_events{account="${a1}"`)).toBe(4);
    expect(value(`herald_queue_depth_recipients{account="${a1}"`)).toBe(2);
    expect(value(`herald_queue_deepest_recipient_events{account="${a1}"`)).toBe(3);
    // a2's queue was delivered and purged: its series is gone rather than stuck at the old value.
    expect(text).not.toContain(`account="${a2}"`);
    const { config } = await f.jsm.streams.info(layout.streams[0] as string);
    expect(value('herald_queue_recipient_cap')).toBe(config.max_msgs_per_subject);
    expect(value('herald_queue_stream_messages')).toBe(4);
  });
});

/** Runs main.ts the way `npm run retention` does. */
function runMain(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(
    process.execPath,
    ['--conditions=herald-source', '--import', 'tsx', 'services/retention/src/main.ts', ...args],
    {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
}

async function collect(
  child: ChildProcess,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => (stdout += d));
  child.stderr?.on('data', (d) => (stderr += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

describe('main.ts', () => {
  it('run-once prints one JSON summary on stdout (logs go to stderr) and exits 0', async () => {
    const [a, r] = [uuid(), uuid()];
    await dispatchMany(f.nc, a, r, 2);
    await deliver(f.nc, f.jsm, a, r, 2);
    const { code, stdout, stderr } = await collect(
      runMain(['run-once'], f.server.env('retention')),
    );
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const summary = JSON.parse(lines[0] ?? '');
    expect(summary).toMatchObject({
      outcome: 'completed',
      trigger: 'manual',
      events_purged: 2,
      consumers_reaped: 1,
    });
    for (const field of [
      'recipients_scanned',
      'events_purged',
      'consumers_reaped',
      'duration_ms',
    ]) {
      expect(typeof summary[field]).toBe('number');
    }
    expect(stderr).toContain('"msg":"retention run finished"');
  }, 30_000);

  it('serves, logs "listening" with its port, and shuts down cleanly on SIGTERM', async () => {
    const child = runMain([], {
      ...f.server.env('retention'),
      PORT: '0',
      HOST: '127.0.0.1',
      TLS_DISABLED: 'true',
      QUEUE_DEPTH_INTERVAL_MS: '0',
    });
    const lines: string[] = [];
    const listening = new Promise<number>((resolve) => {
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
        lines.push(line);
        const entry = JSON.parse(line) as { msg?: string; port?: number };
        if (entry.msg === 'listening' && entry.port) resolve(entry.port);
      });
    });
    const port = await listening;
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    const msgs = lines.map((l) => (JSON.parse(l) as { msg?: string }).msg);
    expect(msgs).toContain('retention scheduled');
    expect(msgs.at(-1)).toBe('shut down cleanly');
  }, 30_000);
});

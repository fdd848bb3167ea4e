import { type ChildProcess, spawn } from 'node:child_process';
import https from 'node:https';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createDb } from '@herald/kit';
import { makeCerts, type TestCerts } from '@herald/testkit';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATION_TABLE } from '../src/migrate.js';
import { writeCatalogue } from './cli.js';
import { natsOf, type Servers, startServers } from './servers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

let servers: Servers;
let certs: TestCerts;

beforeAll(async () => {
  [servers, certs] = await Promise.all([startServers({ nats: true }), makeCerts()]);
  await sql`create database main_fresh`.execute(servers.db);
});
afterAll(() => servers?.stop());

describe('main.ts', () => {
  it('migrates, serves TLS ops endpoints, and shuts down cleanly on SIGTERM', async () => {
    const freshUrl = servers.pg.url.replace(/\/herald$/, '/main_fresh');
    const child = spawn(
      process.execPath,
      ['--conditions=herald-source', '--import', 'tsx', 'services/auth/src/main.ts'],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: freshUrl,
          ...natsOf(servers).env('auth'),
          PORT: '0',
          OPS_PORT: '0',
          HOST: '127.0.0.1',
          TLS_CERT_FILE: certs.certFile,
          TLS_KEY_FILE: certs.keyFile,
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    try {
      const lines = logLines(child);
      const listening = await waitFor(lines, (l) => l.msg === 'listening');
      expect(lines.filter((l) => l.msg === 'listening')).toHaveLength(1);
      const port = Number(listening.port);
      expect(port).toBeGreaterThan(0);

      const ready = await get(port, '/readyz', certs.ca);
      expect(ready).toEqual({ status: 200, body: '{"status":"ready"}' });
      // The checks are on the loopback ops listener, whose port the log line names.
      const opsReady = await fetch(`http://127.0.0.1:${Number(listening.opsPort)}/readyz`);
      expect(await opsReady.text()).toBe(
        '{"status":"ready","checks":{"nats":true,"postgres":true}}',
      );

      const fresh = createDb(freshUrl, 1);
      try {
        const applied = await sql<{
          name: string;
        }>`select name from ${sql.table(MIGRATION_TABLE)}`.execute(fresh);
        expect(applied.rows.map((r) => r.name)).toEqual([
          '0001_init',
          '0002_plans',
          '0003_account_api',
          '0004_dashboard',
          '0005_billing',
          '0006_dashboard_keys',
          '0007_key_tokens',
          '0008_nats_users',
          '0009_key_inbox',
          '0010_key_unsigned_recipients',
          '0011_key_webhook_payload',
          '0012_key_push',
          '0013_pusher_apps',
          '0014_key_names',
        ]);
      } finally {
        await fresh.destroy();
      }

      const exited = new Promise<number | null>((resolve) =>
        child.once('exit', (code) => resolve(code)),
      );
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(lines.some((l) => l.msg === 'shut down cleanly')).toBe(true);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

describe('main.ts with a bad plan catalogue', () => {
  it('exits 1 before connecting, naming the file and the field', async () => {
    const plansFile = writeCatalogue({
      plans: [{ id: 'free', name: 'Free', paid: true }],
      test_key_limits: {},
    });
    const child = spawn(
      process.execPath,
      ['--conditions=herald-source', '--import', 'tsx', 'services/auth/src/main.ts'],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: servers.pg.url,
          ...natsOf(servers).env('auth'),
          PORT: '0',
          TLS_DISABLED: 'true',
          PLANS_FILE: plansFile,
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain(`auth failed to start: plan catalogue ${plansFile} is invalid`);
    expect(stderr).toMatch(/plans\[0\]\.limits: .*test_key_limits\.connections: /);
  });
});

type LogLine = Record<string, unknown>;

function logLines(child: ChildProcess): LogLine[] {
  const lines: LogLine[] = [];
  if (child.stdout) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        lines.push(JSON.parse(line) as LogLine);
      } catch {
        lines.push({ raw: line });
      }
    });
  }
  return lines;
}

async function waitFor(
  lines: LogLine[],
  match: (l: LogLine) => boolean,
  timeoutMs = 20_000,
): Promise<LogLine> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = lines.find(match);
    if (found) return found;
    if (Date.now() > deadline)
      throw new Error(`no matching log line; got ${JSON.stringify(lines)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function get(port: number, path: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    https
      .get({ host: '127.0.0.1', port, path, ca, servername: 'localhost' }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

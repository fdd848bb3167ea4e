import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './service-process.js';

/**
 * A docker compose stack that scripts/test-deploy.sh (or anything using scripts/compose.sh)
 * started: the deploy tests drive it through the same scripts and make targets a newcomer uses,
 * and talk to it only through the ports it publishes on 127.0.0.1. Which stack is read from the
 * environment those scripts export (HERALD_COMPOSE_PROJECT, HERALD_DEPLOY_DIR, the ports).
 */
export interface ComposeStack {
  project: string;
  /** Where the stack's tls/, .env and demo.env live. */
  deployDir: string;
  /** PEM of the stack's CA (what clients trust). */
  ca: string;
  /** The HERALD_* values of demo.env as make compose-up last wrote them. */
  demo(): DemoEnv;
  /** `scripts/compose.sh ARGS…` (docker compose on this stack, or up/down/backup/restore). */
  compose(...args: string[]): Promise<CommandResult>;
  /** The admin CLI inside the auth container with `--json`: its parsed output; throws on failure. */
  admin<T = Record<string, unknown>>(...args: string[]): Promise<T>;
  /** `make TARGET` with this stack's environment, as a newcomer types it. */
  make(target: string): Promise<CommandResult>;
  /** Every container of the stack with its state and health, from `docker compose ps`. */
  containers(): Promise<ContainerState[]>;
  /** Resolves with the ms it took once every running service is healthy; throws past limitMs. */
  waitHealthy(limitMs: number): Promise<number>;
}

export interface DemoEnv {
  baseUrl: string;
  wsUrl: string;
  accountId: string;
  testKey: string;
  testKeyId: string;
  recipient: string;
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ContainerState {
  service: string;
  name: string;
  state: string;
  /** healthy, unhealthy, starting, or '' for a container without a healthcheck. */
  health: string;
  /** Published ports as `address:port->container/proto`. */
  publishers: Array<{ url: string; publishedPort: number; targetPort: number }>;
}

/** Runs a command in the repository root; never throws for a non-zero exit (the caller asserts). */
export function run(cmd: string, args: string[], timeoutMs = 600_000): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      { cwd: REPO_ROOT, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: process.env },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(
      `${name} is not set: the deploy tests run under scripts/test-deploy.sh (make test-deploy), which starts the stack`,
    );
  }
  return value;
}

/** A KEY=value file (deploy/.env, demo.env) as a record; comment lines skipped. */
export function readEnvFile(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0 && !line.startsWith('#')) out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

export function composeStackFromEnv(): ComposeStack {
  const project = required('HERALD_COMPOSE_PROJECT');
  const deployDir = required('HERALD_DEPLOY_DIR');
  const ca = readFileSync(join(deployDir, 'tls', 'ca.crt'), 'utf8');
  const compose = (...args: string[]) => run(join(REPO_ROOT, 'scripts', 'compose.sh'), args);

  async function containers(): Promise<ContainerState[]> {
    const res = await compose('ps', '--all', '--format', 'json');
    if (res.code !== 0) throw new Error(`docker compose ps failed: ${res.stderr}`);
    // One JSON object per line (compose v2.21 and newer).
    return res.stdout
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => {
        const c = JSON.parse(l) as {
          Service: string;
          Name: string;
          State: string;
          Health: string;
          Publishers?: Array<{ URL: string; PublishedPort: number; TargetPort: number }>;
        };
        return {
          service: c.Service,
          name: c.Name,
          state: c.State,
          health: c.Health,
          publishers: (c.Publishers ?? [])
            .filter((p) => p.PublishedPort > 0)
            .map((p) => ({ url: p.URL, publishedPort: p.PublishedPort, targetPort: p.TargetPort })),
        };
      });
  }

  return {
    project,
    deployDir,
    ca,
    demo() {
      const env = readEnvFile(join(deployDir, 'demo.env'));
      const get = (k: string) => {
        const v = env[k];
        if (!v) throw new Error(`demo.env has no ${k}`);
        return v;
      };
      return {
        baseUrl: get('HERALD_BASE_URL'),
        wsUrl: get('HERALD_WS_URL'),
        accountId: get('HERALD_ACCOUNT_ID'),
        testKey: get('HERALD_TEST_KEY'),
        testKeyId: get('HERALD_TEST_KEY_ID'),
        recipient: get('HERALD_RECIPIENT'),
      };
    },
    compose,
    async admin<T>(...args: string[]) {
      const cli = ['exec', '-T', 'auth', 'node', 'services/auth/dist/admin.js', ...args, '--json'];
      const res = await compose(...cli);
      if (res.code !== 0)
        throw new Error(`admin ${args.join(' ')} failed (${res.code}): ${res.stderr}`);
      return JSON.parse(res.stdout) as T;
    },
    make: (target) => run('make', ['-s', target]),
    containers,
    async waitHealthy(limitMs) {
      const started = Date.now();
      let last: ContainerState[] = [];
      while (Date.now() - started < limitMs) {
        last = await containers();
        const running = last.filter((c) => c.state === 'running');
        if (
          last.length > 0 &&
          running.length === last.length &&
          running.every((c) => c.health === 'healthy')
        ) {
          return Date.now() - started;
        }
        await new Promise((r) => setTimeout(r, 500));
      }
      throw new Error(
        `not every container was healthy within ${limitMs} ms: ${last.map((c) => `${c.service}=${c.state}/${c.health || 'no healthcheck'}`).join(', ')}`,
      );
    },
  };
}

export { egressGateway, issueCert } from './compose-host.js';

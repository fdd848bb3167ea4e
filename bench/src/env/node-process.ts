import type { ChildProcess } from 'node:child_process';
import https from 'node:https';
import { REPO_ROOT, spawnTied } from '@herald/testkit';

export { REPO_ROOT };

export interface NodeProcess {
  readonly name: string;
  readonly pid: number;
  readonly port: number;
  /** The V8 inspector's port (127.0.0.1), for forced GC and heap figures. */
  readonly inspectPort: number | undefined;
  /** The last lines the process printed, for failure messages. */
  output(): string;
  /** Signals the process and resolves once it exited (SIGKILL after 15 s). */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface NodeProcessOptions {
  name: string;
  /** Script path relative to the repository root: a .ts entry under tsx, a .js one under node. */
  script: string;
  port: number;
  env: Record<string, string>;
  /** The CA that signed the process's certificate, to poll its /readyz over TLS. */
  ca: string;
  /** argv prefix (taskset) so the process runs on the server CPUs. */
  prefix: string[];
  inspectPort?: number;
  /** Directory for a --cpu-prof profile, written when the process exits on a signal it handles. */
  cpuProfDir?: string;
  readyTimeoutMs?: number;
  /** How readiness shows: /readyz answering 200 over TLS (default), or a `ready` line on stdout. */
  ready?: 'readyz' | 'stdout';
}

/**
 * Runs an entry point, optionally pinned and with the inspector open, and resolves once its
 * /readyz answers 200 over TLS. A `.ts` script runs from source
 * (`node --conditions=herald-source --import tsx`, as the stack harness and `make dev` run
 * services); a `.js` one is a production build run by plain `node`, as deploy/ runs it.
 */
export async function startNodeProcess(opts: NodeProcessOptions): Promise<NodeProcess> {
  const fromSource = opts.script.endsWith('.ts');
  const nodeArgs = [
    ...(fromSource ? ['--conditions=herald-source', '--import', 'tsx'] : []),
    ...(opts.inspectPort ? [`--inspect=127.0.0.1:${opts.inspectPort}`] : []),
    ...(opts.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProfDir}`] : []),
    opts.script,
  ];
  return startServerProcess({
    name: opts.name,
    argv: [...opts.prefix, process.execPath, ...nodeArgs],
    port: opts.port,
    env: { HOST: '127.0.0.1', PORT: String(opts.port), LOG_LEVEL: 'warn', ...opts.env },
    ready:
      opts.ready === 'stdout'
        ? { stdoutLine: /^ready$/m }
        : { https: { path: '/readyz', ca: opts.ca } },
    ...(opts.inspectPort ? { inspectPort: opts.inspectPort } : {}),
    ...(opts.readyTimeoutMs ? { readyTimeoutMs: opts.readyTimeoutMs } : {}),
  });
}

export interface ServerProcessOptions {
  name: string;
  /** The whole command line, the taskset prefix included. */
  argv: string[];
  port: number;
  /** Its environment beyond PATH. */
  env: Record<string, string>;
  /** How readiness shows: an https GET answering 200, a line on stdout, or a check of its own. */
  ready:
    | { https: { path: string; ca: string } }
    | { stdoutLine: RegExp }
    | { check: () => Promise<boolean> };
  inspectPort?: number;
  readyTimeoutMs?: number;
}

/**
 * Runs any server the bench measures (a Node service, Centrifugo, redis-server) as a child process
 * tied to the bench's life (the kit's `spawnTied`: a bench stopped by a signal or an uncaught
 * error leaves no server running), and resolves once it is ready; on failure it is killed and the
 * error carries its last output.
 */
export async function startServerProcess(opts: ServerProcessOptions): Promise<NodeProcess> {
  const [cmd, ...args] = opts.argv as [string, ...string[]];
  const proc: ChildProcess = spawnTied(cmd, args, {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let saidReady = false;
  const { ready } = opts;
  const keep = (chunk: Buffer) => {
    if ('stdoutLine' in ready && ready.stdoutLine.test(chunk.toString('utf8'))) saidReady = true;
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const handle: NodeProcess = {
    name: opts.name,
    pid: proc.pid ?? -1,
    port: opts.port,
    inspectPort: opts.inspectPort,
    output: () => lines.join('\n'),
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill(signal);
      const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
  const isReady = async () => {
    if ('stdoutLine' in ready) return saidReady;
    if ('check' in ready) return ready.check();
    return (await httpsStatus(opts.port, ready.https.path, ready.https.ca)) === 200;
  };
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(
        `${opts.name} exited (${proc.exitCode ?? proc.signalCode}):\n${handle.output()}`,
      );
    }
    if (await isReady()) return handle;
    if (Date.now() > deadline) {
      await handle.stop('SIGKILL');
      throw new Error(`${opts.name} not ready on port ${opts.port}:\n${handle.output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function httpsStatus(port: number, path: string, ca: string): Promise<number> {
  return new Promise((resolve) => {
    const req = https.get(
      { host: '127.0.0.1', port, path, ca, timeout: 2000, agent: false },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
  });
}

import type { ChildProcess } from 'node:child_process';
import https from 'node:https';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PortTakenError } from './ports.js';
import { spawnTied } from './tied-spawn.js';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export type ServiceName = 'auth' | 'ingress-api' | 'socket-edge' | 'retention' | 'status';

export interface ServiceProcess {
  readonly name: ServiceName;
  readonly port: number;
  /** The last lines the process printed (for failure messages). */
  output(): string;
  /** Sends a signal and resolves when the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Runs one Herald service from source as a child process (exactly what `make dev` runs) and
 * resolves once its /readyz answers 200 over TLS.
 */
export async function startServiceProcess(
  name: ServiceName,
  port: number,
  env: Record<string, string>,
  ca: string,
): Promise<ServiceProcess> {
  // SIGTERM: a service stops cleanly when the test process dies.
  const proc: ChildProcess = spawnTied(
    process.execPath,
    ['--conditions=herald-source', '--import', 'tsx', join('services', name, 'src', 'main.ts')],
    {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOST: '127.0.0.1',
        PORT: String(port),
        // Each process picks a free ops port: tests run many stacks side by side.
        OPS_PORT: '0',
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      deathSignal: 'SIGTERM',
    },
  );
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const handle: ServiceProcess = {
    name,
    port,
    output: () => lines.join('\n'),
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill(signal);
      const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
  const deadline = Date.now() + 45_000;
  for (;;) {
    if (proc.exitCode !== null) {
      if (/EADDRINUSE/.test(handle.output())) throw new PortTakenError(port, ` (${name})`);
      throw new Error(`${name} exited with ${proc.exitCode}:\n${handle.output()}`);
    }
    if ((await readyStatus(port, ca)) === 200) return handle;
    if (Date.now() > deadline) {
      await handle.stop('SIGKILL');
      throw new Error(`${name} not ready on port ${port} after 45 s:\n${handle.output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function readyStatus(port: number, ca: string): Promise<number> {
  return new Promise((resolve) => {
    const req = https.get(
      { host: '127.0.0.1', port, path: '/readyz', ca, timeout: 2000 },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
  });
}

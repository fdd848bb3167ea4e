import type { ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PortTakenError, readIfExists, waitFor } from './ports.js';
import { spawnTied } from './tied-spawn.js';

export interface LaunchedNats {
  proc: ChildProcess;
  port: number;
  /** The monitoring port (`/varz`, `/jsz`), when one was asked for. */
  monitorPort?: number;
}

/**
 * Spawns nats-server on 127.0.0.1 and resolves with the port it listens on. By default the server
 * picks a free port itself (`-p -1`), so no other process can take it first; the port is read from
 * the ports file the server writes into `portsDir` once it is listening. With `port` (a restart on
 * the same address) a bind failure rejects with PortTakenError. `monitorPort`: serve nats-server's
 * HTTP monitoring on 127.0.0.1 too, on that port (`-1`: one the server picks, read likewise).
 */
export async function launchNats(
  bin: string,
  args: string[],
  opts: { portsDir: string; port?: number; monitorPort?: number; env?: Record<string, string> },
): Promise<LaunchedNats> {
  const requested = opts.port ?? -1;
  // HERALD_TEST_NATS_LOG=<dir>: each server logs there (permission violations name the user).
  const logDir = process.env.HERALD_TEST_NATS_LOG;
  const log = logDir ? ['-l', join(logDir, `nats-${process.pid}-${Date.now()}.log`)] : [];
  const proc = spawnTied(
    bin,
    [
      ...args,
      ...log,
      '-a',
      '127.0.0.1',
      '-p',
      String(requested),
      ...(opts.monitorPort === undefined ? [] : ['-m', String(opts.monitorPort)]),
      '--ports_file_dir',
      opts.portsDir,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...opts.env } },
  );
  // The last of what it printed, for the error when it exits before listening (read for its
  // whole life, so a full pipe never blocks it).
  let tail = '';
  proc.stderr?.setEncoding('utf8');
  proc.stderr?.on('data', (chunk: string) => {
    tail = (tail + chunk).slice(-2000);
  });
  const ports = await waitFor(
    proc,
    () => {
      const file = readdirSync(opts.portsDir).find((f) => f.endsWith(`_${proc.pid}.ports`));
      const text = file && readIfExists(join(opts.portsDir, file));
      if (!text) return undefined;
      const written = JSON.parse(text) as { nats?: string[]; monitoring?: string[] };
      const url = written.nats?.[0];
      const monitor = written.monitoring?.[0];
      return url ? { port: Number(new URL(url).port), monitor } : undefined;
    },
    () =>
      opts.port
        ? new PortTakenError(opts.port, ` (nats-server exited with ${proc.exitCode})`)
        : new Error(`nats-server exited with ${proc.exitCode} before listening: ${tail.trim()}`),
  );
  return {
    proc,
    port: ports.port,
    ...(ports.monitor ? { monitorPort: Number(new URL(ports.monitor).port) } : {}),
  };
}

/** SIGTERM, then SIGKILL after 3 s; resolves once the process has exited. */
export function stopProcess(proc: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.kill('SIGTERM');
    setTimeout(() => proc.kill('SIGKILL'), 3000).unref();
  });
}

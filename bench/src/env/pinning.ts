import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/**
 * CPU pinning with taskset, so the load generator and the servers it measures do not steal each
 * other's core. Where taskset is missing (or BENCH_PIN=false) everything runs unpinned and the
 * report says so.
 */
export interface Pinning {
  enabled: boolean;
  serverCpus: string;
  clientCpus: string;
  /** argv prefix that runs a command on the server CPUs. */
  serverPrefix(): string[];
  /** Pins every thread of a running process to the server CPUs. */
  pinServer(pid: number): Promise<void>;
  /** Pins every thread of this process (the load generator) to the client CPUs. */
  pinSelf(): Promise<void>;
}

const TASKSET = ['/usr/bin/taskset', '/bin/taskset', '/usr/local/bin/taskset'].find((p) =>
  existsSync(p),
);

export function pinning(opts: {
  enabled: boolean;
  serverCpus: string;
  clientCpus: string;
}): Pinning {
  const enabled = opts.enabled && TASKSET !== undefined;
  const pin = async (pid: number, cpus: string) => {
    if (!enabled || !TASKSET) return;
    await execFileAsync(TASKSET, ['-a', '-p', '-c', cpus, String(pid)]);
  };
  return {
    enabled,
    serverCpus: opts.serverCpus,
    clientCpus: opts.clientCpus,
    serverPrefix: () => (enabled && TASKSET ? [TASKSET, '-c', opts.serverCpus] : []),
    pinServer: (pid) => pin(pid, opts.serverCpus),
    pinSelf: () => pin(process.pid, opts.clientCpus),
  };
}

/** The pid of the process listening on 127.0.0.1:port (from `ss`), or undefined. */
export async function pidListeningOn(port: number): Promise<number | undefined> {
  try {
    const { stdout } = await execFileAsync('ss', ['-Hltnp', `sport = :${port}`]);
    return parsePidFromSs(stdout);
  } catch {
    return undefined;
  }
}

/** Extracts the first `pid=N` of `ss -p` output. */
export function parsePidFromSs(output: string): number | undefined {
  const m = /pid=(\d+)/.exec(output);
  return m?.[1] ? Number(m[1]) : undefined;
}

import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { promisify } from 'node:util';
import { natsServerBinary } from '@herald/testkit';

const execFileAsync = promisify(execFile);

async function run(cmd: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await execFileAsync(cmd, args);
    return (stdout || stderr).trim();
  } catch {
    return 'unknown';
  }
}

/** The commit measured; `+dirty` when the working tree has uncommitted changes. Reads git, never writes it. */
export async function commitId(cwd: string): Promise<string> {
  const head = await run('git', ['-C', cwd, 'rev-parse', '--short=12', 'HEAD']);
  const status = await run('git', ['-C', cwd, 'status', '--porcelain', '--untracked-files=no']);
  return status && status !== 'unknown' ? `${head}+dirty` : head;
}

/** The version of the nats-server every figure runs (the pinned build the test kit resolves). */
export async function natsServerVersion(): Promise<string> {
  try {
    return `v${(await natsServerBinary()).version}`;
  } catch {
    return 'unknown';
  }
}

/** The version of the redis-server the Redis engine runs, e.g. `7.0.15`. */
export async function redisVersion(): Promise<string> {
  const out = await run('redis-server', ['--version']);
  return /v=(\d+\.\d+\.\d+)/.exec(out)?.[1] ?? 'unknown';
}

export function machine(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? 'unknown CPU';
  const gib = (os.totalmem() / 2 ** 30).toFixed(0);
  return `${cpus.length} × ${model}, ${gib} GiB RAM, ${os.type()} ${os.release()}`;
}

/** The 1, 5 and 15 minute load averages and the runnable/total task counts. */
export async function loadAverage(): Promise<string> {
  try {
    const [one, five, fifteen, tasks] = (await readFile('/proc/loadavg', 'utf8')).split(' ');
    return `${one} ${five} ${fifteen} (running/total tasks ${tasks})`;
  } catch {
    return os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  }
}

import type { ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { startPostgresContainer, useContainers } from './containers.js';
import { execFileAsync, which } from './exec.js';
import { PortTakenError, readIfExists, retryOnPortTaken, waitFor } from './ports.js';
import type { PostgresServer } from './servers.js';
import { spawnTied } from './tied-spawn.js';

export type { PostgresServer } from './servers.js';

const PG_DIRS = [
  '/usr/lib/postgresql/17/bin',
  '/usr/lib/postgresql/16/bin',
  '/usr/lib/postgresql/15/bin',
];

/**
 * Starts a private Postgres cluster (initdb in a temporary directory, its own port, fsync off):
 * never the machine's shared server. As root, runs it as the `postgres` OS user, because
 * Postgres refuses to run as root.
 */
export async function startPostgres(): Promise<PostgresServer> {
  if (useContainers()) return startPostgresContainer();
  const initdb = await which('initdb', PG_DIRS);
  const postgres = await which('postgres', PG_DIRS);
  if (!initdb || !postgres)
    throw new Error('PostgreSQL is not installed: run `make deps` (apt-get install postgresql)');
  const dir = mkdtempSync(join(tmpdir(), 'herald-pg-'));
  const data = join(dir, 'data');
  const asRoot = userInfo().uid === 0;
  const runAs = (cmd: string, args: string[]) =>
    (asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]) as [
      string,
      string[],
    ];
  let owner: { uid: number; gid: number } | undefined;
  if (asRoot) {
    chmodSync(dir, 0o755);
    const { stdout } = await execFileAsync('id', ['-u', 'postgres']);
    const { stdout: gid } = await execFileAsync('id', ['-g', 'postgres']);
    owner = { uid: Number(stdout.trim()), gid: Number(gid.trim()) };
    chownSync(dir, owner.uid, owner.gid);
  }
  const [initCmd, initArgs] = runAs(initdb, [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=trust',
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  await execFileAsync(initCmd, initArgs);
  const launch = async (port: number) => {
    const pgArgs = [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'max_connections=200',
    ];
    // SIGQUIT, postgres's immediate stop, when the process that started it dies.
    const proc: ChildProcess = spawnTied(postgres, pgArgs, {
      stdio: ['ignore', 'ignore', 'pipe'],
      deathSignal: 'SIGQUIT',
      ...(owner ? { runAs: owner } : {}),
    });
    let stderr = '';
    proc.stderr?.on('data', (c: Buffer) => {
      stderr = (stderr + c.toString('utf8')).slice(-4000);
    });
    // postmaster.pid's 8th line turns "ready" once the server accepts connections; a failed
    // bind makes it exit instead.
    await waitFor(
      proc,
      () =>
        readIfExists(join(data, 'postmaster.pid'))?.split('\n')[7]?.trim() === 'ready'
          ? true
          : undefined,
      () =>
        /already in use/i.test(stderr)
          ? new PortTakenError(port)
          : new Error(`postgres exited with ${proc.exitCode}:\n${stderr}`),
    );
    return { proc, port };
  };
  const { proc, port } = await retryOnPortTaken(launch);
  // Ready as it is; retry createdb a little anyway in case a first connection is refused.
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await execFileAsync(await requireBin('createdb', PG_DIRS), [
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-U',
        'postgres',
        'herald',
      ]);
      break;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/herald`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        const done = () => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        };
        if (proc.exitCode !== null || proc.signalCode !== null) return done();
        proc.once('exit', done);
        // runuser does not forward signals: signal the postmaster itself (SIGINT = fast shutdown).
        try {
          const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
          process.kill(pid, 'SIGINT');
        } catch {
          proc.kill('SIGKILL');
        }
        setTimeout(() => proc.kill('SIGKILL'), 5000).unref();
      }),
  };
}

async function requireBin(name: string, dirs: string[]): Promise<string> {
  const bin = await which(name, dirs);
  if (!bin) throw new Error(`${name} is not installed`);
  return bin;
}

import { type ChildProcess, spawn } from 'node:child_process';
import {
  chmod,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What a command run to its end printed, and how it ended. */
export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A process inside the namespace, by its command line. */
export interface Inside {
  pid: number;
  cmd: string;
}

/**
 * A network and mount namespace of its own, for running `make dev` exactly as a user does, on its
 * fixed ports, on a machine where another `make dev` or test run may hold them: the loopback
 * inside is private, and chosen folders of the checkout are bind-mounted from empty temporary
 * ones (`.data/`, build outputs a parallel test writes too), so nothing outside is touched.
 * Everything else (the checkout, node_modules, .bin/) is the real one. Root enters with
 * unshare/nsenter alone; another user through a user namespace that maps their own uid, so
 * `make dev` runs as that user, as it would outside.
 */
export class Namespace {
  readonly #holder: ChildProcess;
  readonly #enter: string[];
  readonly #scratch: string;
  readonly #mounts: Map<string, string>;
  readonly #env: NodeJS.ProcessEnv;
  readonly #children = new Set<ChildProcess>();

  private constructor(
    holder: ChildProcess,
    enter: string[],
    scratch: string,
    mounts: Map<string, string>,
    env: NodeJS.ProcessEnv,
  ) {
    this.#holder = holder;
    this.#enter = enter;
    this.#scratch = scratch;
    this.#mounts = mounts;
    this.#env = env;
  }

  /**
   * Opens one: `lo` up, and each of `overlays` (paths under `root`, created there when missing)
   * hidden behind an empty temporary folder. `env` is what commands inside start with.
   */
  static async open(
    root: string,
    overlays: readonly string[],
    env: NodeJS.ProcessEnv,
  ): Promise<Namespace> {
    const scratch = await mkdtemp(join(tmpdir(), 'herald-ns-'));
    const mounts = new Map<string, string>();
    const steps = ['set -e', 'ip link set lo up'];
    for (const [i, path] of overlays.entries()) {
      const source = join(scratch, `overlay-${i}`);
      await mkdir(source, { recursive: true });
      await mkdir(join(root, path), { recursive: true });
      mounts.set(path, source);
      steps.push(`mount --bind '${source}' '${join(root, path)}'`);
    }
    steps.push('echo ready', 'exec sleep infinity');
    const root0 = process.getuid?.() === 0;
    const unshare = root0
      ? ['unshare', '--mount', '--net', '--propagation', 'private']
      : ['unshare', '--user', '--map-current-user', '--mount', '--net'];
    const holder = spawn(
      unshare[0] as string,
      [...unshare.slice(1), 'bash', '-c', steps.join('\n')],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const ready = await new Promise<boolean>((resolve) => {
      let out = '';
      holder.stdout?.on('data', (d) => {
        out += String(d);
        if (out.includes('ready')) resolve(true);
      });
      holder.on('exit', () => resolve(false));
    });
    if (!ready || holder.pid === undefined) {
      throw new Error(
        `could not open a network and mount namespace (${unshare.join(' ')}): this test needs root, or user namespaces (util-linux 2.38+)`,
      );
    }
    const target = ['--target', String(holder.pid)];
    const enter = root0
      ? ['nsenter', ...target, '--mount', '--net', '--']
      : ['nsenter', ...target, '--user', '--preserve-credentials', '--mount', '--net', '--'];
    return new Namespace(holder, enter, scratch, mounts, env);
  }

  /** The temporary folder behind `path` (one of the overlays), as seen from outside. */
  overlay(path: string): string {
    const dir = this.#mounts.get(path);
    if (!dir) throw new Error(`${path} is not an overlay of this namespace`);
    return dir;
  }

  /** Starts a bash command line inside, in `cwd`; the caller reads its output. */
  spawn(command: string, cwd: string): ChildProcess {
    const [bin, ...args] = this.#enter;
    // Entering the mount namespace starts in its root folder, whatever the caller's.
    const child = spawn(bin as string, [...args, 'bash', '-c', `cd '${cwd}' && ${command}`], {
      env: this.#env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#children.add(child);
    child.on('exit', () => this.#children.delete(child));
    return child;
  }

  /** Runs a bash command line inside to its end. */
  run(command: string, cwd: string): Promise<Run> {
    const child = this.spawn(command, cwd);
    return finished(child);
  }

  /** An executable file that runs `program` inside with its arguments (for a browser). */
  async wrapper(program: string): Promise<string> {
    const file = join(this.#scratch, `in-namespace-${program.replaceAll('/', '_')}`);
    const quoted = this.#enter.map((a) => `'${a}'`).join(' ');
    await writeFile(file, `#!/bin/sh\nexec ${quoted} '${program}' "$@"\n`);
    await chmod(file, 0o755);
    return file;
  }

  /**
   * Every live process inside but the namespace's own placeholder. A zombie is left out: it
   * holds no port or file, only its exit status until its parent reads it.
   */
  async processes(): Promise<Inside[]> {
    const own = await readlink(`/proc/${this.#holder.pid}/ns/net`);
    const found: Inside[] = [];
    for (const entry of await readdir('/proc')) {
      const pid = Number(entry);
      if (!Number.isInteger(pid) || pid === this.#holder.pid) continue;
      try {
        if ((await readlink(`/proc/${pid}/ns/net`)) !== own) continue;
        const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
        if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
        const cmd = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).replaceAll('\0', ' ').trim();
        found.push({ pid, cmd });
      } catch {
        // Gone between the listing and the read, or not ours to read: not inside.
      }
    }
    return found;
  }

  /** Kills whatever is still inside, then the namespace, and deletes the temporary folders. */
  async close(): Promise<void> {
    for (const p of await this.processes().catch(() => [])) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    for (const child of this.#children) child.kill('SIGKILL');
    this.#holder.kill('SIGKILL');
    await new Promise((r) =>
      this.#holder.exitCode === null ? this.#holder.once('exit', r) : r(null),
    );
    // The overlays were mounted in the namespace only; outside, the temporary folders are plain.
    await rm(this.#scratch, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Resolves once the child exits, with everything it printed. */
export function finished(child: ChildProcess): Promise<Run> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => {
    stdout += String(d);
  });
  child.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  return new Promise((resolve) => {
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '@herald/testkit';

/**
 * The production build of what the bench runs, as deploy/ builds it: each service and every
 * workspace it imports compiled by its own `npm run build` (tsc) into dist/, then run with plain
 * `node dist/main.js`. The bench's baselines are compiled the same way (bench/tsconfig.baselines.json,
 * into bench/dist/), so both sides run tsc's output on the same Node.
 */

interface Workspace {
  dir: string;
  name: string;
  deps: string[];
  hasBuild: boolean;
}

function workspaces(root: string): Map<string, Workspace> {
  const dirs = ['proto', 'lib', 'services'].flatMap((top) => {
    if (top === 'proto') return ['proto'];
    const base = join(root, top);
    return existsSync(base) ? readdirSync(base).map((d) => join(top, d)) : [];
  });
  const out = new Map<string, Workspace>();
  for (const dir of dirs) {
    const file = join(root, dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as {
      name: string;
      dependencies?: Record<string, string>;
      scripts?: Record<string, string>;
    };
    out.set(pkg.name, {
      dir,
      name: pkg.name,
      deps: Object.keys(pkg.dependencies ?? {}).filter((d) => d.startsWith('@herald/')),
      hasBuild: Boolean(pkg.scripts?.build),
    });
  }
  return out;
}

/** The workspaces the given service folders need at run time, dependencies first. */
export function buildOrder(serviceDirs: string[], root = REPO_ROOT): string[] {
  const all = workspaces(root);
  const byDir = new Map([...all.values()].map((w) => [w.dir, w]));
  const order: string[] = [];
  const seen = new Set<string>();
  const visit = (w: Workspace | undefined) => {
    if (!w || seen.has(w.name)) return;
    seen.add(w.name);
    for (const d of w.deps) visit(all.get(d));
    if (w.hasBuild) order.push(w.dir);
  };
  for (const dir of serviceDirs) {
    const w = byDir.get(dir);
    if (!w) throw new Error(`no workspace at ${dir}`);
    visit(w);
  }
  return order;
}

/** Newest modification time of the files under dir (0 when it does not exist). */
function newest(dir: string, skip: (name: string) => boolean = () => false): number {
  if (!existsSync(dir)) return 0;
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (skip(entry.name)) continue;
    const p = join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(p, skip) : statSync(p).mtimeMs);
  }
  return t;
}

/**
 * True when dist/ is missing or older than a source file or the build configuration, so a stale
 * build is never measured. Test files do not count: they are not built.
 */
export function isStale(dir: string, root = REPO_ROOT, out = 'dist', src = ['src']): boolean {
  const built = newest(join(root, dir, out));
  if (built === 0) return true;
  const inputs = Math.max(
    ...src.map((s) => newest(join(root, dir, s), (n) => n.endsWith('.test.ts'))),
    ...['package.json', 'tsconfig.build.json', 'tsconfig.baselines.json']
      .map((f) => join(root, dir, f))
      .filter(existsSync)
      .map((f) => statSync(f).mtimeMs),
  );
  return inputs > built;
}

function run(cmd: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: string[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => out.push(c.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve()
        : reject(
            new Error(`${cmd} ${args.join(' ')} failed (${code}):\n${out.join('').slice(-4000)}`),
          ),
    );
  });
}

/**
 * Builds what the bench runs from dist/ when it is stale: the services' workspaces through their
 * own `npm run build`, and the baselines through bench/tsconfig.baselines.json. Resolves with the
 * folders it built (empty when everything was current).
 */
export async function ensureBuilt(
  serviceDirs: string[],
  log: (m: string) => void,
  root = REPO_ROOT,
): Promise<string[]> {
  const built: string[] = [];
  for (const dir of buildOrder(serviceDirs, root)) {
    if (!isStale(dir, root)) continue;
    log(`building ${dir} (npm run build)`);
    await run('npm', ['run', 'build', '--silent'], join(root, dir));
    built.push(dir);
  }
  if (isStale('bench', root, 'dist', ['src/baselines'])) {
    log('building the baselines (bench/tsconfig.baselines.json)');
    await run(
      process.execPath,
      [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.baselines.json'],
      join(root, 'bench'),
    );
    built.push(relative(root, join(root, 'bench')));
  }
  return built;
}

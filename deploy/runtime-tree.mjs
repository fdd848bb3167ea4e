// Assembles the runtime image's /app from a built checkout (deploy/Dockerfile runs it):
//   node deploy/runtime-tree.mjs OUT
//   node deploy/runtime-tree.mjs --build-order   prints the workspaces to build, one per line,
//                                                each after the workspaces it imports
// OUT gets a root package.json listing only the workspaces a service runs, the lockfile,
// config/, each of those workspaces' package.json (without devDependencies and scripts) and
// dist/ (without declarations and source maps), and the dashboard's built files. `npm install
// --omit=dev` in OUT then installs exactly their runtime dependencies: no TypeScript sources, no
// dev dependencies, no test kit.
import {
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

const out = process.argv[2];
if (!out) {
  console.error('usage: node deploy/runtime-tree.mjs OUT | --build-order');
  process.exit(2);
}

/** The services the image runs; every workspace they import at run time comes along. */
const SERVICES = [
  'services/auth',
  'services/ingress-api',
  'services/retention',
  'services/socket-edge',
  'services/status',
];

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));

/**
 * The services plus the workspaces their `dependencies` name, transitively (dev dependencies,
 * such as the test kit, stay out). Derived from the package files so a moved or new library
 * cannot be left out of the image.
 */
function workspacesByName() {
  const root = readJson('package.json');
  const byName = new Map();
  for (const pattern of root.workspaces) {
    const dirs = pattern.endsWith('/*')
      ? readdirSync(pattern.slice(0, -2)).map((d) => join(pattern.slice(0, -2), d))
      : [pattern];
    for (const dir of dirs) {
      try {
        byName.set(readJson(join(dir, 'package.json')).name, dir);
      } catch {
        // not a workspace folder
      }
    }
  }
  return byName;
}

function runtimeWorkspaces() {
  const byName = workspacesByName();
  const found = new Set();
  const visit = (dir) => {
    if (found.has(dir)) return;
    found.add(dir);
    for (const dep of Object.keys(readJson(join(dir, 'package.json')).dependencies ?? {})) {
      const ws = byName.get(dep);
      if (ws) visit(ws);
    }
  };
  for (const service of SERVICES) visit(service);
  return [...found].sort();
}

const RUNTIME = runtimeWorkspaces();
/** Static files served by auth (DASHBOARD_DIR), no package of their own at run time. */
const STATIC = ['clients/dashboard/dist'];
/** Built for the image but not run in it: the dashboard (and the SDK it bundles). */
const BUILT_ONLY = ['clients/sdk', 'clients/dashboard'];

/**
 * The runtime workspaces and the dashboard, each after every workspace of the set it imports
 * (dev dependencies count: a build reads their declarations), so each `tsc` finds its
 * libraries' dist/ already written.
 */
function buildOrder() {
  const byName = workspacesByName();
  const wanted = new Set([...RUNTIME, ...BUILT_ONLY]);
  const ordered = [];
  const visit = (dir) => {
    if (ordered.includes(dir)) return;
    const pkg = readJson(join(dir, 'package.json'));
    for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })) {
      const ws = byName.get(dep);
      if (ws && wanted.has(ws) && ws !== dir) visit(ws);
    }
    if (!ordered.includes(dir)) ordered.push(dir);
  };
  for (const dir of [...wanted].sort()) visit(dir);
  return ordered.filter((dir) => readJson(join(dir, 'package.json')).scripts?.build);
}

if (out === '--build-order') {
  process.stdout.write(`${buildOrder().join('\n')}\n`);
  process.exit(0);
}

const root = readJson('package.json');

mkdirSync(out, { recursive: true });
writeFileSync(
  join(out, 'package.json'),
  `${JSON.stringify(
    {
      name: root.name,
      private: true,
      type: root.type,
      description: root.description,
      engines: root.engines,
      workspaces: RUNTIME,
    },
    null,
    2,
  )}\n`,
);
cpSync('package-lock.json', join(out, 'package-lock.json'));
cpSync('config', join(out, 'config'), { recursive: true });

/** Drops what only a compiler or debugger reads: declarations, source maps, build info. */
function prune(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) prune(path);
    else if (/\.(d\.ts|d\.ts\.map|js\.map|map|tsbuildinfo)$/.test(name)) rmSync(path);
  }
}

for (const ws of RUNTIME) {
  const pkg = readJson(join(ws, 'package.json'));
  delete pkg.devDependencies;
  delete pkg.scripts;
  mkdirSync(join(out, ws), { recursive: true });
  writeFileSync(join(out, ws, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  cpSync(join(ws, 'dist'), join(out, ws, 'dist'), { recursive: true });
  prune(join(out, ws, 'dist'));
}
for (const dir of STATIC) {
  cpSync(dir, join(out, dir), { recursive: true });
  prune(join(out, dir));
}

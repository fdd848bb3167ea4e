// Assembles the runtime image's /app from a built checkout (deploy/Dockerfile runs it):
//   node deploy/runtime-tree.mjs OUT
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
  console.error('usage: node deploy/runtime-tree.mjs OUT');
  process.exit(2);
}

/** The workspaces the services import at run time. */
const RUNTIME = [
  'proto',
  'lib/access',
  'lib/payments',
  'lib/queue',
  'services/kit',
  'services/auth',
  'services/ingress-api',
  'services/retention',
  'services/socket-edge',
  'services/status',
];
/** Static files served by auth (DASHBOARD_DIR), no package of their own at run time. */
const STATIC = ['clients/dashboard/dist'];

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));
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

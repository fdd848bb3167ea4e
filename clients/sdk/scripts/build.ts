import { copyFile, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type BuildOptions, build as esbuild, type Plugin } from 'esbuild';
import { rollup } from 'rollup';
import { dts } from 'rollup-plugin-dts';
import { isStale } from '../../../scripts/lib/freshness.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const at = (...p: string[]) => join(ROOT, ...p);

/** What a build reads; dist/ is stale when any of these is newer than it. */
const INPUTS = [
  at('src'),
  at('scripts', 'build.ts'),
  at('package.json'),
  at('tsconfig.json'),
  at('..', '..', 'proto', 'src'),
];

/**
 * The browser and React Native build must never reach for `ws` and its Node built-ins, and carries
 * no explanations of Node's network errors, which those runtimes never give.
 */
const browserLoader: Plugin = {
  name: 'browser-load-ws',
  setup(b) {
    b.onResolve({ filter: /\/load-ws\.js$/ }, () => ({ path: at('src', 'load-ws.browser.ts') }));
    b.onResolve({ filter: /\/network-cause\.js$/ }, () => ({
      path: at('src', 'network-cause.browser.ts'),
    }));
  },
};

/**
 * dist/index.js (ESM) and index.cjs (CJS) for Node and bundlers, with `ws` left as a lazy
 * import; browser.js, minified ESM without it; index.d.ts and index.d.cts, one file each with
 * proto's types inlined, because @herald/proto is private and never published. server.js,
 * server.cjs and server.d.ts are `@herald/sdk/server`, built from their own entry with `jose`
 * left as a dependency (and `ws` lazy, as in index.js; the server's Herald is the core's plus topics): nothing the browser build imports reaches them. push.js and push.d.ts are
 * `@herald/sdk/push` (Web Push subscriptions, browsers only), herald-sw.js is `@herald/sdk/sw`
 * (the service worker an app serves): apart from the core, which must not grow for apps without push.
 */
export async function build(opts: { ifStale?: boolean } = {}): Promise<'built' | 'fresh'> {
  if (opts.ifStale && !(await isStale(at('dist', 'index.d.cts'), INPUTS))) return 'fresh';
  // Several vitest runs may build at once while others read dist/: build aside, then move each
  // file in with an atomic rename, so a reader never sees a missing or half-written file. The
  // scratch directory sits beside dist/ so the source maps' relative paths stay right.
  await mkdir(DIST, { recursive: true });
  const out = await mkdtemp(join(ROOT, '.dist-'));
  try {
    await emit(out);
    const produced = await readdir(out);
    for (const file of produced) await rename(join(out, file), join(DIST, file));
    for (const file of await readdir(DIST)) {
      if (!produced.includes(file)) await rm(join(DIST, file), { recursive: true, force: true });
    }
  } finally {
    await rm(out, { recursive: true, force: true });
  }
  return 'built';
}

async function emit(out: string): Promise<void> {
  const common: BuildOptions = {
    entryPoints: [at('src', 'index.ts')],
    bundle: true,
    // Resolve @herald/proto to its TypeScript sources: it is bundled, never a dependency.
    conditions: ['herald-source'],
    target: 'es2022',
    sourcemap: true,
    legalComments: 'none',
    logLevel: 'warning',
    tsconfig: at('tsconfig.json'),
  };
  await Promise.all([
    esbuild({
      ...common,
      format: 'esm',
      platform: 'neutral',
      external: ['ws'],
      outfile: join(out, 'index.js'),
    }),
    esbuild({
      ...common,
      format: 'cjs',
      platform: 'node',
      external: ['ws'],
      outfile: join(out, 'index.cjs'),
    }),
    esbuild({
      ...common,
      format: 'esm',
      platform: 'browser',
      minify: true,
      plugins: [browserLoader],
      outfile: join(out, 'browser.js'),
    }),
    declarations(at('src', 'index.ts'), join(out, 'index.d.ts')),
    // The server entry: Node only (and server runtimes with WebCrypto), jose from dependencies.
    esbuild({
      ...common,
      entryPoints: [at('src', 'server.ts')],
      format: 'esm',
      platform: 'node',
      external: ['jose', 'ws'],
      outfile: join(out, 'server.js'),
    }),
    esbuild({
      ...common,
      entryPoints: [at('src', 'server.ts')],
      format: 'cjs',
      platform: 'node',
      external: ['jose', 'ws'],
      outfile: join(out, 'server.cjs'),
    }),
    declarations(at('src', 'server.ts'), join(out, 'server.d.ts')),
    // @herald/sdk/push: browsers and native apps (registerDevice), its own file, so the core bundle carries none of it.
    esbuild({
      ...common,
      entryPoints: [at('src', 'push.ts')],
      format: 'esm',
      platform: 'browser',
      minify: true,
      plugins: [browserLoader],
      outfile: join(out, 'push.js'),
    }),
    declarations(at('src', 'push.ts'), join(out, 'push.d.ts')),
    // @herald/sdk/sw: a classic script an app serves as is, so readable (not minified).
    esbuild({
      ...common,
      entryPoints: [at('src', 'sw.ts')],
      format: 'iife',
      platform: 'browser',
      target: 'es2020',
      sourcemap: false,
      outfile: join(out, 'herald-sw.js'),
    }),
  ]);
  await copyFile(join(out, 'index.d.ts'), join(out, 'index.d.cts'));
  await copyFile(join(out, 'server.d.ts'), join(out, 'server.d.cts'));
}

async function declarations(input: string, file: string): Promise<void> {
  const bundle = await rollup({
    input,
    plugins: [
      dts({
        tsconfig: at('tsconfig.json'),
        respectExternal: true,
        compilerOptions: { noEmit: false },
      }),
    ],
    onwarn(warning, warn) {
      if (warning.code !== 'CIRCULAR_DEPENDENCY') warn(warning);
    },
  });
  await bundle.write({ file, format: 'es' });
  await bundle.close();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = Date.now();
  await build();
  console.log(`@herald/sdk built into dist/ in ${Date.now() - started} ms`);
}

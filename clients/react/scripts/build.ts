import { copyFile, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build as esbuild } from 'esbuild';
import { rollup } from 'rollup';
import { dts } from 'rollup-plugin-dts';
import { isStale } from '../../../scripts/lib/freshness.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const at = (...p: string[]) => join(ROOT, ...p);

/** Left to the app: React (a peer), the icons and the SDK (dependencies, deduplicated by npm). */
export const EXTERNAL = ['react', 'react-dom', 'react/jsx-runtime', 'lucide-react', '@herald/sdk'];

const INPUTS = [at('src'), at('scripts', 'build.ts'), at('package.json'), at('tsconfig.json')];

/**
 * dist/index.js: one ES module, not minified (the app's bundler minifies and tree-shakes it:
 * `sideEffects` names only the stylesheet); dist/index.d.ts; dist/push.js and push.d.ts
 * (`@herald/react/push`, the opt-in push switch); dist/styles.css, the optional
 * stylesheet. Built aside and moved in file by file, so a concurrent reader never sees half.
 */
export async function build(opts: { ifStale?: boolean } = {}): Promise<'built' | 'fresh'> {
  if (opts.ifStale && !(await isStale(at('dist', 'index.d.ts'), INPUTS))) return 'fresh';
  await mkdir(DIST, { recursive: true });
  const out = await mkdtemp(join(ROOT, '.dist-'));
  try {
    const bundle = (entry: string, outfile: string) =>
      esbuild({
        entryPoints: [at('src', entry)],
        bundle: true,
        format: 'esm',
        platform: 'browser',
        target: 'es2022',
        jsx: 'automatic',
        external: EXTERNAL,
        sourcemap: true,
        legalComments: 'none',
        logLevel: 'warning',
        // A client component for React Server Components (Next.js app router): it uses hooks.
        banner: { js: "'use client';" },
        tsconfig: at('tsconfig.json'),
        outfile: join(out, outfile),
      });
    await Promise.all([
      bundle('index.ts', 'index.js'),
      // @herald/react/push: usePush apart, so that an app without it carries not even its imports.
      bundle('use-push.ts', 'push.js'),
      declarations('index.ts', join(out, 'index.d.ts')),
      declarations('use-push.ts', join(out, 'push.d.ts')),
      copyFile(at('src', 'styles.css'), join(out, 'styles.css')),
    ]);
    const produced = await readdir(out);
    for (const file of produced) await rename(join(out, file), join(DIST, file));
  } finally {
    await rm(out, { recursive: true, force: true });
  }
  return 'built';
}

async function declarations(entry: string, file: string): Promise<void> {
  const bundle = await rollup({
    input: at('src', entry),
    external: (id) => EXTERNAL.some((e) => id === e || id.startsWith(`${e}/`)),
    plugins: [dts({ tsconfig: at('tsconfig.json'), compilerOptions: { noEmit: false } })],
  });
  await bundle.write({ file, format: 'es' });
  await bundle.close();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = Date.now();
  await build();
  console.log(`@herald/react built into dist/ in ${Date.now() - started} ms`);
}

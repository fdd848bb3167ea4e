import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build as esbuild } from 'esbuild';
import { build } from './build.js';

/** What the bell adds to an app that already has React, min+gzip: itself, its icons, the SDK. */
export const BUDGET_BYTES = 14.25 * 1024;

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Bundles `import { ... } from dist/index.js` the way an app's bundler would (minified, browser
 * conditions, React external) and returns the min+gzip size. `what` picks the imports: the bell
 * itself, or one constant (which must shake everything else away).
 */
export async function measure(
  what = 'NotificationBell',
): Promise<{ minified: number; gzip: number; code: string }> {
  await build({ ifStale: true });
  const result = await esbuild({
    stdin: {
      contents: `export { ${what} } from ${JSON.stringify(join(ROOT, 'dist', 'index.js'))};`,
      resolveDir: ROOT,
      loader: 'js',
    },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    external: ['react', 'react-dom', 'react/jsx-runtime'],
    write: false,
    logLevel: 'warning',
  });
  const code = result.outputFiles[0]?.contents ?? new Uint8Array();
  return {
    minified: code.length,
    gzip: gzipSync(code, { level: 9 }).length,
    code: new TextDecoder().decode(code),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const kb = (n: number) => `${(n / 1024).toFixed(2)} KB (${n} B)`;
  const s = await measure();
  console.log(
    `NotificationBell with the SDK and icons: minified ${kb(s.minified)}  min+gzip ${kb(s.gzip)}`,
  );
  if (s.gzip > BUDGET_BYTES) {
    console.error(`over budget: min+gzip must stay under ${kb(BUDGET_BYTES)}`);
    process.exitCode = 1;
  }
}

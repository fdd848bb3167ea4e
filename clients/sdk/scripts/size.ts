import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from './build.js';

/** The browser bundle's budget, minified + gzipped (see README). */
export const BUDGET_BYTES = 7.5 * 1024;

const DIST = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');

/**
 * Sizes of a dist/ file as shipped (default the core browser bundle, the one with a budget):
 * minified, then gzip -9 and brotli (max quality).
 */
export async function measure(
  file = 'browser.js',
): Promise<{ minified: number; gzip: number; brotli: number }> {
  await build({ ifStale: true });
  const code = await readFile(join(DIST, file));
  return {
    minified: code.length,
    gzip: gzipSync(code, { level: 9 }).length,
    brotli: brotliCompressSync(code, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
}

const kb = (n: number) => `${(n / 1024).toFixed(2)} KB (${n} B)`;
const s = await measure();
console.log(
  `dist/browser.js  minified ${kb(s.minified)}  min+gzip ${kb(s.gzip)}  min+brotli ${kb(s.brotli)}`,
);
// Apart from the budget: what an app that imports push, or serves the worker, adds.
for (const file of ['push.js', 'herald-sw.js']) {
  const o = await measure(file);
  console.log(
    `dist/${file.padEnd(12)} minified ${kb(o.minified)}  min+gzip ${kb(o.gzip)}  min+brotli ${kb(o.brotli)}`,
  );
}
if (s.gzip > BUDGET_BYTES) {
  console.error(`over budget: min+gzip must stay under ${kb(BUDGET_BYTES)}`);
  process.exitCode = 1;
}

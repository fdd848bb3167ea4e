import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build as esbuild } from 'esbuild';
import { build } from '../../scripts/build.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SDK_DIST = join(ROOT, '..', 'sdk', 'dist');

/** A page of one switch on `usePush`, as an app writes it; its state in data-* attributes. */
const APP = `
import { createElement as h } from 'react';
import { createRoot } from 'react-dom/client';
import { usePush } from ${JSON.stringify(join(ROOT, 'dist', 'push.js'))};

function Switch({ baseUrl, userID }) {
  const p = usePush({ apikey: 'hk_test_push', userID, baseUrl, serviceWorker: '/herald-sw.js' });
  return h('div', null,
    h('output', {
      id: 'push',
      'data-supported': String(p.pushSupported),
      'data-enabled': String(p.pushEnabled),
      'data-pending': String(p.pushPending),
      'data-error': p.pushError ? p.pushError.code : '',
    }),
    h('button', { id: 'on', onClick: () => p.enablePush() }, 'Enable notifications'),
    h('button', { id: 'off', onClick: () => p.disablePush() }, 'Turn off notifications'));
}
const q = new URLSearchParams(location.search);
createRoot(document.getElementById('root')).render(
  h(Switch, { baseUrl: q.get('base'), userID: q.get('user') }));
`;

/**
 * The page on http://localhost (a secure context), bundled by esbuild as an app's bundler would,
 * code-split so that `@herald/sdk/push` (loaded by `enablePush`/`disablePush` alone) is a chunk
 * of its own; serves `@herald/sdk/sw` at /herald-sw.js. Records each path asked for, and names
 * the chunk that holds HeraldPush.
 */
export async function servePushSite() {
  await build({ ifStale: true });
  const result = await esbuild({
    stdin: { contents: APP, resolveDir: ROOT, loader: 'js' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    outdir: '/out',
    write: false,
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'warning',
  });
  const files = new Map(result.outputFiles.map((f) => [`/${basename(f.path)}`, f.text]));
  const entry = [...files.keys()].find((p) => p.startsWith('/stdin'));
  const pushChunk = [...files].find(([, text]) => text.includes('vapid-public-key'))?.[0];
  if (!entry || !pushChunk || pushChunk === entry)
    throw new Error('the bundle has no chunk of its own for @herald/sdk/push');
  const requested: string[] = [];
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requested.push(path);
    const send = (type: string, body: string | Buffer) =>
      void res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    if (path === '/herald-sw.js')
      return send('text/javascript', readFileSync(join(SDK_DIST, 'herald-sw.js')));
    const js = files.get(path);
    if (js !== undefined) return send('text/javascript', js);
    send(
      'text/html',
      `<!doctype html><meta charset="utf-8"><div id="root"></div><script type="module" src="${entry}"></script>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://localhost:${port}`,
    requested,
    pushChunk,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

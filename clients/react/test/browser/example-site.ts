import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeCerts } from '@herald/testkit';
import { build as viteBuild } from 'vite';
import { build } from '../../scripts/build.js';

const EXAMPLE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'example');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/**
 * The built example app over HTTPS (a secure context: Web Locks, and the web key's origin). Each
 * test file builds into its own `outDir` (under example/, gitignored as `dist*`), so files
 * running at once never empty each other's build. Every path but /assets/ serves index.html.
 */
export async function serveExample(
  outDir = 'dist',
): Promise<{ origin: string; close: () => Promise<void> }> {
  await build({ ifStale: true });
  const dist = join(EXAMPLE, outDir);
  await viteBuild({
    configFile: join(EXAMPLE, 'vite.config.ts'),
    logLevel: 'error',
    build: { outDir: dist },
  });
  const certs = await makeCerts();
  const server = https.createServer(
    { cert: readFileSync(certs.certFile), key: readFileSync(certs.keyFile) },
    (req, res) => {
      const path = new URL(req.url ?? '/', 'https://x').pathname;
      const file = path.startsWith('/assets/') ? join(dist, path) : join(dist, 'index.html');
      try {
        const body = readFileSync(file);
        res
          .writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' })
          .end(body);
      } catch {
        res.writeHead(404).end();
      }
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `https://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

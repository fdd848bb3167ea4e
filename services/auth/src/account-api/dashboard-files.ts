import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import type { Middleware } from 'koa';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
};

/** Paths the API and ops endpoints own: never answered with a file. */
const API = /^\/(v1|healthz|readyz|metrics)(\/|$)/;

/**
 * Serves the built dashboard (DASHBOARD_DIR) on the account API's own listener, so the app and
 * the API share an origin and the session cookie and CSRF token work as they are. A GET for a
 * path that is no file gets index.html (the app routes in the browser). Hashed assets are cached
 * for a year; index.html never, so a new build shows at the next load.
 */
export function dashboardFiles(dir: string): Middleware {
  const root = normalize(dir + sep);
  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || API.test(ctx.path)) return next();
    let path: string;
    try {
      path = normalize(join(root, decodeURIComponent(ctx.path)));
    } catch {
      return next();
    }
    if (!path.startsWith(root)) return next();
    const file = (await isFile(path)) ? path : join(root, 'index.html');
    if (!(await isFile(file))) return next();
    const type = TYPES[extname(file)] ?? 'application/octet-stream';
    ctx.type = type;
    ctx.set(
      'Cache-Control',
      file.includes(`${sep}assets${sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache',
    );
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'same-origin');
    if (type.startsWith('text/html')) ctx.set('X-Frame-Options', 'DENY');
    ctx.body = await readFile(file);
  };
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
